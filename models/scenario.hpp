// A what-if input: model, system, plan and training budget, read from a scenario JSON file.
#pragma once
#include <string>

#include "hardware/catalog.hpp"
#include "models/plan.hpp"
#include "models/transformer.hpp"

namespace podsim {

struct Scenario {
    std::string file;
    std::string name;
    std::string description;
    ModelSpec model;
    SystemSpec system;
    ParallelPlan plan;
    double token_budget = 0;   // tokens to train; 0 = not given
    std::string region;        // pricing region; empty = the catalog's first entry for the SKU
};

Scenario scenario_from_json(const Json& j, const std::string& file, const Catalog& cat);
Scenario load_scenario(const std::string& file, const Catalog& cat);

}  // namespace podsim
