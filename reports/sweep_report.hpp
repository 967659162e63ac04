// A sweep's rows for people and programs: one CSV line or JSON object per grid point, with its best plan.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "planner/sweep.hpp"

namespace podsim {

std::string sweep_csv(const Sweep& s, const std::vector<SweepRow>& rows);
nlohmann::json sweep_json(const Sweep& s, const std::vector<SweepRow>& rows);

}  // namespace podsim
