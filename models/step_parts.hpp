// The pieces of a training step that the discrete-event step model (step.cpp) and the planner's closed form
// (fast_step.cpp) share, so that both read the same rules: rank layout, split checks, efficiencies, pipeline
// partition, activations in flight, optimizer time and the MFU convention.
#pragma once
#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "hardware/calibration/kernel_profile.hpp"
#include "hardware/limits.hpp"
#include "hardware/system.hpp"
#include "models/plan.hpp"
#include "models/transformer.hpp"

namespace podsim {

struct Layout {
    std::vector<int> sizes;  // innermost first
    size_t tp, cp, dp, pp;   // indices into sizes
};
// Megatron orders ranks tp, cp, dp, pp (tp fastest); on TPU the pipeline (rare) sits inside the slice and the
// data-parallel axis is outermost, so that multislice puts only data parallelism on DCN.
Layout layout_for(const SystemSpec& sys, const ParallelPlan& p);

// The layout of the expert dims of a mixture of experts (Megatron-core): the tp x cp x dp ranks regrouped as
// etp (fastest) x ep x edp, pipeline as in the dense layout.
struct ExpertLayout {
    std::vector<int> sizes;
    size_t etp, ep, edp;
};
ExpertLayout expert_layout_for(const SystemSpec& sys, const ParallelPlan& p);

// Layer index where model chunk `mc` of `nchunks` starts (chunks in order, remainders to the earliest).
inline int chunk_first_layer(int layers, int nchunks, int mc) {
    return mc * (layers / nchunks) + std::min(mc, layers % nchunks);
}

// The chip with the GEMM efficiency the plan runs at: an override (fitting), else a profile for this chip and
// precision class, else the catalog's stated default. `source` says which.
ChipSpec resolve_efficiency(const SystemSpec& sys, const ParallelPlan& p, bool use_profiles, double override_fraction,
                            std::string& source);

// What one simulation may use (--max-tasks, --max-memory): a plan whose task graph would exceed it is refused
// with the figure and the limit before anything is allocated.
struct SimBudget {
    long long max_tasks = limits::default_max_tasks;
    double max_memory_bytes = limits::default_max_memory_bytes;
    // The most plans a plan completion screens (about 1.5 million a second on one core): a partial plan whose free
    // fields span more is refused with the figure, not searched for minutes.
    long long max_completion_plans = 20'000'000;
};

// The event engine's size for one step: tasks (compute, sends, gradient buckets, tail) and the bytes the graph,
// the engine's arrays and the builder's indices take (measured per task, see the bench), with the timeline's
// spans when one is recorded. An upper bound, computed in doubles so that no input overflows it.
struct StepSize {
    double tasks = 0;
    double bytes = 0;
};
StepSize step_size_estimate(const ParallelPlan& p, long long micro_batches, bool record_timeline = false);

// Checks that do not need the network or memory: chip count, divisibility, schedule, fp8 / int8 / fp4 support, and
// the simulation budget. `fail` gets a sentence and the scenario JSON path it is about; it is called only for
// failures (no strings otherwise).
using FailFn = std::function<void(std::string, const char*)>;
void check_split(const ModelSpec& m, const SystemSpec& sys, const ParallelPlan& p, const ChipSpec& chip,
                 const FailFn& fail, const SimBudget& budget = {});

// Layers of model chunk `mc` of `nchunks` (pp x vpp): remainders go to the earliest chunks. Chunk c of stage s is
// model chunk c x pp + s.
inline int chunk_layers(int layers, int nchunks, int mc) { return layers / nchunks + (mc < layers % nchunks); }

// Layer-activation sets (in units of the stage's layers) stage s holds at its peak.
double in_flight_microbatches(const ParallelPlan& p, int stage, long long micro_batches);

// The optimizer step over `shard_params` parameters on one device (AdamW reads and writes master weights, both
// moments, the gradient and the compute copy); from a kernel profile's measured AdamW when there is one.
double optimizer_time_s(double shard_params, const ParallelPlan& p, const ChipSpec& chip,
                        const calib::KernelProfile* kernels);

// The parameters of a mean layer one device gathers under FSDP: the dense part split by TP, the routed experts'
// by ep x expert TP.
double fsdp_layer_params_per_device(const ModelSpec& m, const ParallelPlan& p);

// Model FLOPs per token under the stated convention (kMfuConvention in step.hpp); `causal_halved`: attention
// counted for the causal half only (Megatron-LM's and MaxText's convention), which matters at long context.
double model_flops_per_token(const ModelSpec& m, bool causal_halved = false);

}  // namespace podsim
