// Strategy search: every plan of the plan space on the scenario's system (and on what-if sizes of it) screened
// with the closed-form step, the best re-simulated with the discrete-event engine (and optionally SimGrid), ranked
// by time, cost or MFU, with the time-vs-cost Pareto front and cost advice (cheapest within a deadline, fastest
// within a budget).
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hardware/catalog.hpp"
#include "models/fast_step.hpp"
#include "models/plan_space.hpp"
#include "models/scenario.hpp"
#include "models/step.hpp"
#include "planner/cost.hpp"

namespace podsim {

enum class Objective { time, cost, mfu };
const char* to_string(Objective o);
std::optional<Objective> objective_from_string(const std::string& s);  // "time", "cost", "mfu"

struct SearchOptions {
    Objective objective = Objective::time;
    int top = 10;                       // plans printed
    int confirm = 40;                   // best screened plans re-simulated with the engine (>= top)
    int refine = 0;                     // best confirmed plans re-simulated with the SimGrid backend
    std::vector<double> scales = {1};   // system sizes searched, as multiples of the scenario's chip count
    PriceOption price = PriceOption::on_demand;
    std::optional<double> deadline_days, budget_usd;  // cost advice
    bool use_profiles = true;
    SimBudget budget;                   // what one engine simulation may use (max_tasks, max_memory)
    std::optional<PlanSpace> space;     // instead of default_plan_space (tests, sweeps that pin a setting)
    PlanConstraints constraints;        // what the user pinned (--tp 1,2,4,8, --precision bf16, ...)
    // Threads that screen and confirm plans (the CLI's --jobs, default the machine's cores); the result is the
    // same for any number.
    int jobs = 1;
    // Called now and then with (plans screened so far, plans in the space); for a progress bar.
    std::function<void(size_t, size_t)> progress;
};

struct RankedPlan {
    SystemSpec system;
    ParallelPlan plan;
    StepEstimate screened;              // closed form
    StepResult step;                    // engine (analytical network): the figures reported
    std::optional<double> simgrid_step_s;  // SimGrid step time (SearchOptions::refine)
    CostReport cost;
    std::optional<double> usd_per_hour;    // at the chosen price option
    double score = 0;                   // lower is better, for the objective
    std::vector<std::string> equivalents;  // other plans with the very same step time and memory (folded away)
    size_t enumeration_index = 0;          // the plan's place in the search's enumeration (ties go to the earliest)
};

struct SystemSearch {
    std::string label;
    int chips = 0;
    size_t plans = 0, feasible = 0;
    std::map<Reject, size_t> rejected;
    std::map<Reject, std::string> example;  // one rejected plan per reason, with simulate_step's sentence
};

struct SearchResult {
    std::vector<SystemSearch> systems;
    std::vector<std::string> skipped_scales;  // sizes that exist for no system of this kind, with why
    size_t plans = 0, feasible = 0;
    double screen_s = 0, confirm_s = 0, refine_s = 0;
    int refined = 0;                 // plans re-simulated with SimGrid
    size_t confirmed = 0;            // plans re-simulated with the engine (before folding equal ones)
    std::vector<RankedPlan> ranked;  // engine-confirmed, best first
    std::vector<size_t> pareto;      // indices into ranked: time to train vs dollars, non-dominated
    std::optional<size_t> cheapest_within_deadline, fastest_within_budget;
    std::string advice_note;         // why advice is missing (no prices, no token budget, nothing meets it)
    Objective objective = Objective::time;
    PriceOption price = PriceOption::on_demand;
};

// A one-line description of a plan: "tp 8 pp 16 (vpp 2) dp 24 cp 1 sp mb 1 zero 1 rc selective bf16".
std::string describe_plan(const ParallelPlan& p);
// The same, compact, for chart labels: "tp4 pp4x12 dp64 sp mb1 z1 rc:none fp8".
std::string short_plan(const ParallelPlan& p);

SearchResult search_plans(const Scenario& s, const Catalog& cat, const ReliabilityInputs& rel, const SearchOptions& o);

}  // namespace podsim
