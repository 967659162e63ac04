// Pipeline schedules, each with its two faces side by side: the program order a stage runs its passes in (the
// event engine lowers it to a task graph) and the closed form of the pipeline's length (the planner's formula).
// A new schedule (zero-bubble, DualPipe) adds both here; tests/test_schedules.cpp checks that the two agree.
#pragma once
#include <vector>

#include "models/plan.hpp"

namespace podsim {

// One pass of a stage: the forward or backward of one model chunk of the stage for one micro-batch.
struct StagePass {
    bool fwd;
    int chunk;
    int mb;
};

// Stage s's passes in program order under the plan's schedule (pp stages, vpp chunks, m micro-batches).
std::vector<StagePass> program_order(Schedule schedule, int pp, int vpp, int stage, int micro_batches);

// A stage's work per micro-batch, summed over its chunks (closed form input).
struct StageWork {
    double F = 0, B = 0;  // forward, backward (with recomputation)
    // Extra time of the stage's last backward (its gradient buckets contend with it; vpp 1 only). The play-out
    // charges it where it happens, so a stage that is not on the flush's chain does not pass it on.
    double last_b_extra = 0;
};

// The closed form: time from the first forward to the end of stage 0's last backward, for stages with the given
// work, m micro-batches, vpp chunks per stage and hand-off t between neighbouring stages. Exact for identical
// stages; for unequal ones it follows the heaviest stage (tests/test_schedules.cpp: within 0.5% of the engine,
// interleaved with uneven chunks within 12%).
class PipelineFormula {
public:
    double pipeline_s(Schedule schedule, const std::vector<StageWork>& stages, long long micro_batches, int vpp,
                      double t);

    // Where the last pipeline_s call played the schedule out (1F1B, see below), the time each stage's last
    // backward ended (last_b_extra included), stage by stage; empty where it used the bound. The closed form uses
    // these in place of "stage s ends s backward hops before stage 0 and every slowdown on the flush's chain
    // delays it", which holds only for identical stages.
    const std::vector<double>& stage_ends_s() const { return stage_end_; }

private:
    // 1F1B played out pass by pass (hand-off t): with fewer micro-batches than stages, and with a block of two or
    // more clearly heavier stages when M x P is at most kPlayOutPasses (the play-out costs O(M P), the bound O(P)).
    static constexpr double kPlayOutPasses = 8192;
    double one_f_one_b_small(const std::vector<StageWork>& stages, long long micro_batches, double t);
    std::vector<double> f_end_, b_end_, free_at_;  // its scratch, kept across plans (no allocation per plan)
    std::vector<int> next_;
    std::vector<double> stage_end_;  // per stage, set by one_f_one_b_small, cleared by the bound
};

// The forward-only pipeline of an evaluation batch (models/evaluation.hpp): m micro-batches through the stages'
// forwards (StageWork::F; B unused), vpp chunks per stage, hand-off t. Megatron-LM runs evaluation through the same
// schedule functions with forward_only=True (megatron/core/pipeline_parallel/schedules.py, read at d98e8a6, 2026:
// forward_backward_pipelining_without_interleaving and _with_interleaving): without interleaving each stage
// runs its warm-up forwards and then, in place of 1F1B, forward + send_forward + recv_forward per micro-batch (blocking
// sends), no backward, no cooldown; with interleaving get_pp_rank_microbatches makes every one of the m x vpp chunk
// forwards a warm-up forward, played in the schedule table's order (groups of pp micro-batches per chunk). So a stage
// pays one hand-off per chunk forward, and for P identical stages of forward F the batch takes
//   (m + P - 1) x (F + t)                  without interleaving,
//   (m vpp + P - 1) x (F / vpp + t)        interleaved (chunks of F / vpp: the fill shrinks by vpp, the hand-offs
//                                          grow by vpp),
// which is the flow-shop bound max over stages k of [m (F_k + vpp t) + (sum of the other stages' F) / vpp + (P-1) t]
// for stages that differ. One stage: m F.
double forward_only_pipeline_s(const std::vector<StageWork>& stages, long long micro_batches, int vpp, double t);

}  // namespace podsim
