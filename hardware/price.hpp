// Cloud prices: per chip-hour (TPU) or per VM-hour (GPU), under each purchase option.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "hardware/json_reader.hpp"

namespace podsim {

enum class PriceOption { on_demand, spot, commit_1y, commit_3y };
const char* to_string(PriceOption p);
inline constexpr PriceOption kAllPriceOptions[] = {PriceOption::on_demand, PriceOption::spot, PriceOption::commit_1y,
                                                   PriceOption::commit_3y};

// A committed-use discount binds the buyer to pay for every hour of its term, used or not (Compute Engine and
// Cloud TPU CUDs: 1- or 3-year terms, billed monthly; cloud.google.com/compute/docs/instances/committed-use-discounts-overview).
// The term in hours (a year of 365 days); nullopt for options without a term.
std::optional<double> commitment_term_hours(PriceOption p);

// "on-demand", "spot", "1y", "3y" (the names scenarios, sweeps and the CLI use); nullopt for anything else.
std::optional<PriceOption> price_option_from_string(const std::string& s);

struct PriceEntry {
    std::string sku;     // chip id (TPU, per chip-hour) or node id (GPU VM, per VM-hour)
    std::string unit;    // "chip_hour" or "vm_hour"
    std::string region;
    std::optional<double> on_demand_usd, spot_usd, commit_1y_usd, commit_3y_usd;
    // An option the seller does not offer for this SKU and region ("not offered" in the file), as opposed to a
    // price that is offered but not known (null): indexed by PriceOption.
    bool not_offered[4] = {false, false, false, false};
    // Dynamic Workload Scheduler (Cloud's flex-start and calendar modes), where published; per unit-hour.
    std::optional<double> dws_flex_start_usd, dws_calendar_usd;
    bool dws_flex_start_not_offered = false, dws_calendar_not_offered = false;
    std::string source;
    std::string source_date;

    std::optional<double> usd(PriceOption p) const;
    // The field holding option p's price (on_demand_usd, spot_usd, ...), to read or set by option.
    const std::optional<double>& slot(PriceOption p) const;
    std::optional<double>& slot(PriceOption p);
    bool offered(PriceOption p) const { return !not_offered[static_cast<int>(p)]; }
};

std::vector<PriceEntry> prices_from_json(const JsonObject& o);

}  // namespace podsim
