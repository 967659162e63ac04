#include "models/fast_step.hpp"

namespace podsim {

namespace {
PricingOptions pricing(bool use_profiles, SimBudget budget, const calib::KernelProfile* kernels) {
    PricingOptions o;
    o.use_profiles = use_profiles;
    o.budget = budget;
    o.kernels = kernels;
    return o;
}
}  // namespace

StepEstimator::StepEstimator(const ModelSpec& m, const SystemSpec& sys, bool use_profiles, SimBudget budget,
                             const calib::KernelProfile* kernels)
    : sys_(sys), timer_(sys_, NetworkBackend::analytical), pricer_(m, sys_, timer_, pricing(use_profiles, budget, kernels)) {}

StepEstimate StepEstimator::estimate(const ParallelPlan& p) {
    StepEstimate r;
    pricer_.price(p, costs_, false);
    r.memory_bytes = costs_.memory.total_bytes, r.hbm_bytes = costs_.memory.hbm_bytes;
    r.reject = costs_.reject;
    if (r.reject != Reject::none) return r;
    const StageTiming t = scheduler_.time(costs_);
    const StepSummary sum = summarize(costs_, t);
    r.step_time_s = t.step_s;
    r.breakdown = sum.breakdown;
    r.tokens_per_s = sum.tokens_per_s;
    r.mfu = sum.mfu, r.hfu = sum.hfu;
    return r;
}

}  // namespace podsim
