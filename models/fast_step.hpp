// The planner's step: the same priced step as the event engine's (step_costs.hpp), timed by the schedule's closed
// form (closed_form.hpp) instead of a task graph, and summarized by the same summarize(). It screens hundreds of
// thousands of plans a second; the planner re-simulates the plans it reports with the engine. Analytical network
// only; the pricer caches what plans share (layouts, layer costs). One estimator per thread.
#pragma once
#include <string>

#include "hardware/system.hpp"
#include "models/closed_form.hpp"
#include "models/plan.hpp"
#include "models/step_costs.hpp"
#include "models/summarize.hpp"
#include "models/transformer.hpp"
#include "sim/network_backend.hpp"

namespace podsim {

struct StepEstimate {
    Reject reject = Reject::none;
    double step_time_s = 0;
    StepBreakdown breakdown;  // on the critical stage, as simulate_step defines it
    double tokens_per_s = 0;
    double mfu = 0, hfu = 0;
    double memory_bytes = 0, hbm_bytes = 0;  // busiest stage
    bool feasible() const { return reject == Reject::none; }
};

class StepEstimator {
public:
    StepEstimator(const ModelSpec& m, const SystemSpec& sys, bool use_profiles = true, SimBudget budget = {},
                  const calib::KernelProfile* kernels = nullptr);
    StepEstimator(const StepEstimator&) = delete;
    StepEstimator& operator=(const StepEstimator&) = delete;

    StepEstimate estimate(const ParallelPlan& p);
    // The priced step of the last estimate (valid until the next one).
    const StepCosts& last_costs() const { return costs_; }
    size_t cached_layouts() const { return pricer_.cached_layouts(); }
    size_t cached_layer_costs() const { return pricer_.cached_layer_costs(); }

private:
    SystemSpec sys_;
    CollectiveTimer timer_;
    StepPricer pricer_;
    ClosedFormScheduler scheduler_;
    StepCosts costs_;  // reused: no allocation per plan once warm
};

}  // namespace podsim
