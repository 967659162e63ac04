// What-if grids: a base scenario and axes (system = chip type and count or slice shape, chip-count scales, model,
// global batch, token budget, price option, region); every point of the grid searched for its best plan.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "hardware/catalog.hpp"
#include "models/scenario.hpp"
#include "planner/search.hpp"

namespace podsim {

struct SweepPoint {
    Scenario scenario;                          // the base with this point's overrides
    PriceOption price = PriceOption::on_demand;
    std::vector<std::pair<std::string, std::string>> axes;  // axis name -> value, as printed
};

struct Sweep {
    std::string file, name;
    Objective objective = Objective::time;
    std::vector<std::string> axis_names;
    std::vector<SweepPoint> points;
};

// Reads and checks the whole grid up front: a bad axis value is reported with its path in the sweep file
// ($.axes.system[2]: ...), before any point is searched.
Sweep load_sweep(const std::string& file, const Catalog& cat);

struct SweepRow {
    const SweepPoint* point = nullptr;
    SearchResult search;  // ranked.front() is the point's best plan (when any fits)
};

// `advice`: deadline_days / budget_usd (podsim sweep --deadline-days / --budget-usd): each point's search also
// finds the cheapest plan within the deadline and the fastest within the budget (SearchResult's advice).
struct SweepAdvice {
    std::optional<double> deadline_days, budget_usd;
};
SweepRow run_sweep_point(const SweepPoint& p, Objective objective, const Catalog& cat, const ReliabilityInputs& rel,
                         const SimBudget& budget = {}, const SweepAdvice& advice = {});

}  // namespace podsim
