// The planner's answer for people (text) and programs (JSON): what was searched, what was dropped and why, the
// ranked plans with their breakdown and memory, the Pareto front and the cost advice.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "models/scenario.hpp"
#include "planner/search.hpp"

namespace podsim {

std::string search_text(const Scenario& s, const SearchResult& r, int top);
nlohmann::json search_json(const Scenario& s, const SearchResult& r, int top);

}  // namespace podsim
