// Time to train a token budget, chip-hours and dollars under each purchase option of the catalog.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "hardware/catalog.hpp"
#include "models/scenario.hpp"
#include "models/step.hpp"
#include "planner/goodput.hpp"
#include "planner/train_time.hpp"

namespace podsim {

struct OptionCost {
    PriceOption option;
    std::optional<double> usd_per_hour;   // whole system
    bool offered = true;                  // false: the seller does not offer this option (not a missing price)
    std::optional<double> usd_total;      // for the token budget, no failures
    std::optional<double> usd_per_million_tokens;  // over wall time, evaluation passes included
    std::optional<double> usd_total_with_failures;  // at this option's goodput (spot adds preemptions)
    double effective_time_s = 0;
    // Commitments: the buyer pays every hour of the term, used or not. The run needs `terms` whole terms of
    // `term_hours` (usually 1); usd_commitment is what they cost, and the run (with failures) uses
    // run_share_of_commitment of it. usd_total / usd_total_with_failures above stay the run's share.
    std::optional<double> term_hours;
    int terms = 0;
    std::optional<double> usd_commitment;
    double run_share_of_commitment = 0;
    // What choosing this option costs the buyer for this training: the commitment's whole terms, or the run with
    // failures for options without a term. Search advice (cheapest within a deadline, fastest within a budget) and
    // the Pareto front use it.
    std::optional<double> usd_outlay;
};

struct CostReport {
    double token_budget = 0;
    double time_to_train_s = 0;   // 0 when no budget; evaluation passes included (train.total_s)
    TrainTime train;              // its steps and evaluations
    double chip_hours = 0;
    std::string price_sku, price_region, price_source, price_date, price_unit;
    std::vector<OptionCost> options;
    std::string no_price_reason;  // set when the catalog has no price for this system
    std::vector<JobFailures> failures;  // the job's failure rate by component, with sources
    Goodput goodput;              // failures only (on-demand and commitments)
    Goodput goodput_spot;         // failures and spot preemptions
    // Each recovery strategy's goodput and on-demand dollars with failures (spares priced as hosts of the system).
    struct Recovery {
        RecoveryOption option;
        std::optional<double> usd_on_demand_with_failures;
    };
    std::vector<Recovery> recovery;
    std::string reliability_file;
};

// The entry of one purchase option in a cost report; nullptr when the report has none (no price).
const OptionCost* find_option(const CostReport& c, PriceOption p);

// The hourly price of a whole system under one purchase option (TPU per chip-hour x chips, GPU per VM-hour x
// nodes); nullopt when the catalog has none (on-premise systems, options a SKU is not sold under).
// `negotiated` (a scenario's pricing.negotiated) replaces the catalog's price of the options it gives, for its SKU.
std::optional<double> system_usd_per_hour(const Catalog& cat, const SystemSpec& sys, const std::string& region,
                                          PriceOption option, const NegotiatedPrice* negotiated = nullptr);

CostReport cost_report(const ModelSpec& m, const SystemSpec& sys, const StepResult& step, double token_budget,
                       const Catalog& cat, const std::string& region, const ReliabilityInputs& rel,
                       const NegotiatedPrice* negotiated = nullptr);

}  // namespace podsim
