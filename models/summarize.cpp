#include "models/summarize.hpp"

#include <algorithm>

namespace podsim {

StepSummary summarize(const StepCosts& c, const StageTiming& t) {
    StepSummary r;
    const double sync_wait = std::max(0.0, t.optimizer_start_s - t.last_backward_end_s) +
                             std::max(0.0, t.step_s - t.optimizer_end_s);
    r.breakdown.compute_s = t.compute_s;
    r.breakdown.optimizer_s = t.optimizer_s;
    r.breakdown.exposed_comm_s = t.exposed_comm_s + sync_wait;
    r.breakdown.bubble_s = std::max(0.0, t.step_s - t.busy_s - sync_wait);
    r.tokens_per_s = c.tokens_per_step / t.step_s;
    const double denom = double(c.chips) * c.peak_flops_per_s * t.step_s;
    r.mfu = c.model_flops_per_step / denom;
    r.mfu_causal = c.model_flops_causal_per_step / denom;
    r.hfu = c.hardware_flops_per_step / denom;
    return r;
}

}  // namespace podsim
