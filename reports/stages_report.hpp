// The stages of one simulated step as data a reader (or a golden file) can inspect: one layer's op list, the priced
// step (StepCosts: per stage and chunk), and the size of the task graph the engine ran (podsim run --stages).
#pragma once
#include "hardware/json_reader.hpp"
#include "models/lower_step.hpp"
#include "models/scenario.hpp"
#include "models/step_costs.hpp"

namespace podsim {

// `low` may be null (a plan over its memory that was not lowered).
Json stages_json(const Scenario& s, const StepCosts& costs, const LoweredStep* low);

}  // namespace podsim
