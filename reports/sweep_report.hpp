// A sweep's rows for people and programs: one CSV line or JSON object per grid point, with its best plan.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "planner/sweep.hpp"

namespace podsim {

std::string sweep_csv(const Sweep& s, const std::vector<SweepRow>& rows);
nlohmann::json sweep_json(const Sweep& s, const std::vector<SweepRow>& rows);

// The same, in parts (a shard of a sweep holds its rows; merging puts them back in order).
std::string sweep_csv_header(const Sweep& s);
std::string sweep_csv_row(const Sweep& s, const SweepRow& r);
nlohmann::json sweep_json_head(const Sweep& s);  // "points" empty
nlohmann::json sweep_point_json(const SweepRow& r);

}  // namespace podsim
