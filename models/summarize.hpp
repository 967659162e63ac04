// The step's figures from a scheduler's timing of a priced step: one definition of the breakdown, throughput,
// MFU and HFU, used by the event engine's path and by the planner's closed form alike.
#pragma once
#include "models/step_costs.hpp"

namespace podsim {

struct StepBreakdown {
    double compute_s = 0;        // kernels on the critical stage
    double exposed_comm_s = 0;   // TP/CP/FSDP collectives not hidden, plus exposed gradient/parameter sync
    double bubble_s = 0;         // pipeline fill/drain and waits on neighbours
    double optimizer_s = 0;
    double input_wait_s = 0;     // the step waiting for its input pipeline (input_pipeline.hpp), when slower
};

// What a scheduler measured on the stage that ends last (the critical stage).
struct StageTiming {
    double step_s = 0;
    int critical_stage = 0;
    // Busy time on its compute stream, by kind (the kernels' share of passes, their exposed collectives, the
    // optimizer).
    double compute_s = 0, exposed_comm_s = 0, optimizer_s = 0;
    double busy_s = 0;  // their sum, as the scheduler added it up
    double last_backward_end_s = 0;  // its last compute pass ends (gradient sync may still run)
    double optimizer_start_s = 0, optimizer_end_s = 0;
};

struct StepSummary {
    StepBreakdown breakdown;
    double tokens_per_s = 0;
    double mfu = 0, hfu = 0, mfu_causal = 0;
};

// Waiting for the gradient sync before the optimizer, and for the parameter gather after it, is exposed
// communication; the rest of the step that the stage is not busy is pipeline bubble.
StepSummary summarize(const StepCosts& costs, const StageTiming& t);

}  // namespace podsim
