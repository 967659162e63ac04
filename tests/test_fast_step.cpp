// The planner's closed form against the discrete-event step it stands in for, over plans the search enumerates.
#include <algorithm>
#include <cmath>
#include <vector>

#include "helpers.hpp"
#include "models/fast_step.hpp"
#include "models/plan_space.hpp"
#include "models/scenario.hpp"
#include "models/step.hpp"

using namespace podsim;
using podsim::test::approx;

namespace {

struct Agreement {
    std::vector<double> errors;  // estimate / engine - 1, feasible plans
    int verdict_mismatch = 0, compared = 0;
    double worst = 0;
    ParallelPlan worst_plan;
};

// Every `stride`-th plan of the default space (a deterministic sample across splits and options).
Agreement compare(const std::string& scenario_name, int want) {
    const Scenario sc = load_scenario(podsim::test::scenario(scenario_name), podsim::test::catalog());
    StepEstimator est(sc.model, sc.system);
    const PlanSpace space = default_plan_space(sc.model, sc.system, sc.plan);
    std::vector<ParallelPlan> plans;
    for_each_plan(sc.system, sc.plan, space, [&](const ParallelPlan& p) {
        if (est.estimate(p).feasible()) plans.push_back(p);
    });
    Agreement a;
    const size_t stride = std::max<size_t>(1, plans.size() / want);
    for (size_t i = 0; i < plans.size(); i += stride) {
        const StepEstimate e = est.estimate(plans[i]);
        const StepResult r = simulate_step(sc.model, sc.system, plans[i]);
        ++a.compared;
        if (!r.feasible) {
            ++a.verdict_mismatch;
            continue;
        }
        const double err = e.step_time_s / r.step_time_s - 1;
        a.errors.push_back(err);
        if (std::fabs(err) > std::fabs(a.worst)) a.worst = err, a.worst_plan = plans[i];
    }
    return a;
}

double median_abs(std::vector<double> v) {
    for (auto& x : v) x = std::fabs(x);
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

TEST_CASE("the closed-form step agrees with the engine on sampled plans of four scenarios") {
    for (const char* name : {"megatron-1t-3072xa100.json", "gpt3-175b-128xa3-mega.json", "llama3-405b-v5p.json",
                             "seed-1.2t-v4-2048.json"}) {
        CAPTURE(name);
        const Agreement a = compare(name, 80);
        const auto& w = a.worst_plan;
        MESSAGE(std::string(name) << ": " << a.errors.size() << " plans, median |error| " << 100 * median_abs(a.errors)
                     << "%, worst " << 100 * a.worst << "% (tp " << w.tp << " cp " << w.cp << " pp " << w.pp << " vpp "
                     << w.vpp << " dp " << w.dp << " mb " << w.micro_batch << " zero " << w.zero << " rc "
                     << std::string(to_string(w.recompute)) << ")");
        CHECK(a.verdict_mismatch == 0);
        CHECK(a.errors.size() >= 20);
        CHECK(median_abs(a.errors) < 0.005);
        CHECK(std::fabs(a.worst) < 0.03);
    }
}
