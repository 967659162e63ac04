// One plan's results as a readable table or as JSON.
#pragma once
#include <string>

#include "models/scenario.hpp"
#include "models/step.hpp"
#include "planner/cost.hpp"

namespace podsim {

std::string plan_text(const Scenario& s, const StepResult& r, const CostReport& c);
Json run_json(const Scenario& s, const StepResult& r, const CostReport& c);  // `run --format json`

}  // namespace podsim
