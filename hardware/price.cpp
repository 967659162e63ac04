#include "hardware/price.hpp"

namespace podsim {

const char* to_string(PriceOption p) {
    switch (p) {
        case PriceOption::on_demand: return "on-demand";
        case PriceOption::spot: return "spot";
        case PriceOption::commit_1y: return "1-year commitment";
        case PriceOption::commit_3y: return "3-year commitment";
    }
    return "?";
}

std::optional<PriceOption> price_option_from_string(const std::string& s) {
    if (s == "on-demand") return PriceOption::on_demand;
    if (s == "spot") return PriceOption::spot;
    if (s == "1y") return PriceOption::commit_1y;
    if (s == "3y") return PriceOption::commit_3y;
    return std::nullopt;
}

const std::optional<double>& PriceEntry::slot(PriceOption p) const {
    switch (p) {
        case PriceOption::on_demand: return on_demand_usd;
        case PriceOption::spot: return spot_usd;
        case PriceOption::commit_1y: return commit_1y_usd;
        case PriceOption::commit_3y: break;
    }
    return commit_3y_usd;
}

std::optional<double>& PriceEntry::slot(PriceOption p) {
    return const_cast<std::optional<double>&>(static_cast<const PriceEntry&>(*this).slot(p));
}

std::optional<double> PriceEntry::usd(PriceOption p) const { return slot(p); }

std::vector<PriceEntry> prices_from_json(const JsonObject& o) {
    o.only_keys({"schema_version", "provider", "currency", "entries", "notes"});
    if (o.integer("schema_version") != 1) o.fail("schema_version", "expected 1");
    if (o.string("currency") != "USD") o.fail("currency", "expected \"USD\"");
    const Json& arr = o.array("entries");
    std::vector<PriceEntry> out;
    for (size_t i = 0; i < arr.size(); ++i) {
        JsonObject e(arr[i], o.file(), o.path() + ".entries[" + std::to_string(i) + "]");
        e.only_keys({"sku", "unit", "region", "on_demand_usd", "spot_usd", "commit_1y_usd", "commit_3y_usd", "source",
                     "source_date", "notes", "dws_flex_start_usd", "dws_calendar_usd"});
        PriceEntry p;
        p.sku = e.string("sku");
        p.unit = e.one_of("unit", {"chip_hour", "vm_hour"});
        p.region = e.string("region");
        // A price > 0, null (offered, price not known) or the string "not offered".
        auto price = [&](const char* k, bool& not_offered) -> std::optional<double> {
            if (e.has(k) && e.raw().at(k).is_string()) {
                if (e.raw().at(k).get<std::string>() != "not offered")
                    e.fail(k, "expected a price > 0, null (not known) or \"not offered\"");
                not_offered = true;
                return std::nullopt;
            }
            auto v = e.opt_number(k);
            if (v && *v <= 0) e.fail(k, "expected a price > 0, null (not known) or \"not offered\"");
            return v;
        };
        p.on_demand_usd = price("on_demand_usd", p.not_offered[0]);
        p.spot_usd = price("spot_usd", p.not_offered[1]);
        p.commit_1y_usd = price("commit_1y_usd", p.not_offered[2]);
        p.commit_3y_usd = price("commit_3y_usd", p.not_offered[3]);
        p.dws_flex_start_usd = price("dws_flex_start_usd", p.dws_flex_start_not_offered);
        p.dws_calendar_usd = price("dws_calendar_usd", p.dws_calendar_not_offered);
        p.source = e.string("source");
        p.source_date = e.string("source_date");
        if (p.source.empty()) e.fail("source", "expected a citation");
        out.push_back(p);
    }
    return out;
}

std::optional<double> commitment_term_hours(PriceOption p) {
    if (p == PriceOption::commit_1y) return 365.0 * 24;
    if (p == PriceOption::commit_3y) return 3 * 365.0 * 24;
    return std::nullopt;
}

}  // namespace podsim
