// The planner's face of a priced step: the schedule's closed form (schedule.hpp) plus each stage's tail (gradient
// buckets draining, flush sync, optimizer, parameter gather), giving the same StageTiming the engine measures.
#pragma once
#include <vector>

#include "models/schedule.hpp"
#include "models/step_costs.hpp"
#include "models/summarize.hpp"

namespace podsim {

class ClosedFormScheduler {
public:
    // Requires costs.structural_ok(). Scratch is kept across calls (no allocation per plan once warm).
    StageTiming time(const StepCosts& costs);

private:
    PipelineFormula formula_;
    std::vector<StageWork> work_;
    std::vector<double> chunk_end_;
};

// One evaluation batch of a priced step: `micro_batches` per replica through the forward-only pipeline
// (forward_only_pipeline_s) with each stage's forward summed over its chunks (ChunkCosts::fwd_s, its exposed
// collectives included) and the step's hand-off. Nothing else of the step runs: no backward or recomputation, no
// gradient sync, no optimizer or parameter gather.
double forward_only_s(const StepCosts& costs, long long micro_batches);

}  // namespace podsim
