#pragma once
// The pieces every command's JSON output is made of (issue #14 item 5: one key per concept). `run`, `search`,
// `sweep`, `check` and `validate` build their plans, breakdowns, memory, networks, systems and prices from these
// functions only, so a concept has one spelling everywhere; docs/output.schema.json documents them ($defs of the
// same names) and tests/test_json_contract.cpp validates every command's output against it.

#include <nlohmann/json.hpp>

#include "hardware/price.hpp"
#include "models/plan.hpp"
#include "models/scenario.hpp"
#include "planner/cost.hpp"
#include "planner/search.hpp"

namespace podsim {

// Version of the output contract (docs/output.schema.json). 2: one key per concept (issue #14).
inline constexpr int kOutputSchemaVersion = 2;

// {"schema_version": 2, "command": cmd}: the head of every command's JSON output.
nlohmann::json output_head(const char* command);

// "on-demand", "spot", "1y", "3y": the names scenarios, sweeps and the CLI take (price_option_from_string's inverse).
const char* price_option_key(PriceOption p);

nlohmann::json scenario_ref_json(const Scenario& s);          // {name, file}
nlohmann::json system_json(const SystemSpec& s);              // {label, chip, chips}
nlohmann::json plan_json(const ParallelPlan& p);              // every plan field
nlohmann::json breakdown_json(const StepBreakdown& b);        // {compute, exposed_communication, pipeline_bubble, optimizer}
nlohmann::json memory_json(const MemoryBreakdown& m);         // per device, bytes
nlohmann::json networks_json(const std::vector<NetworkUse>& n);
nlohmann::json option_cost_json(const OptionCost& oc);        // one price option's dollars
// A plan the search ranked: system, plan, step and its parts, memory, and the dollars at `price` (null without one).
nlohmann::json ranked_plan_json(const RankedPlan& p, PriceOption price);

}  // namespace podsim
