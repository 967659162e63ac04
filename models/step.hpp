// One training step by the event engine: the plan priced (step_costs.hpp), lowered with its schedule's program
// order to a task graph (lower_step.hpp), run, and summarized (summarize.hpp): the step's time, breakdown,
// utilization and memory, or the reasons the plan is impossible.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "hardware/system.hpp"
#include "models/evaluation.hpp"
#include "models/input_pipeline.hpp"
#include "models/memory.hpp"
#include "models/lower_step.hpp"
#include "models/op_cost.hpp"
#include "models/plan.hpp"
#include "models/step_costs.hpp"
#include "models/step_parts.hpp"
#include "models/summarize.hpp"
#include "models/transformer.hpp"
#include "sim/engine.hpp"
#include "sim/network_backend.hpp"

namespace podsim {

struct StepResult {
    bool feasible = true;
    std::vector<std::string> infeasible;  // reasons, when not feasible
    std::vector<std::string> infeasible_paths;  // the scenario JSON path each reason is about
    double step_time_s = 0;
    StepBreakdown breakdown;
    double tokens_per_step = 0;
    double tokens_per_s = 0;
    double model_flops_per_step = 0;  // convention in mfu_convention
    double hardware_flops_per_step = 0;
    double mfu = 0, hfu = 0;
    double mfu_causal = 0;            // the same with causal attention counted once (Megatron-LM / MaxText)
    std::string peak_name;            // the peak MFU is measured against
    double peak_flops_per_s = 0;
    MemoryBreakdown memory;
    long long micro_batches = 0;
    std::vector<NetworkUse> networks;
    std::string efficiency_source;    // which efficiencies the op costs used
    std::string network_backend;      // "analytical" or "simgrid (N flow simulations)"
    size_t simulated_tasks = 0;
    int critical_stage = 0;
    SimResult sim;                    // timeline only when asked for
    std::vector<TimelineSpan> timeline;  // record_timeline: every task, in start order
    std::vector<OpTiming> layer_forward, layer_backward;  // one layer, one micro-batch (backward incl. recompute)
    // Transformer layers of each stage's model chunks (stage s, chunk c at s x vpp + c; model chunk c x pp + s), for
    // traces that show per-layer events.
    int pp = 1, vpp = 1;
    int dp = 1;  // data-parallel replicas (elastic recovery drops one)
    std::vector<int> chunk_layers;
    std::optional<EvalPass> evaluation;  // one evaluation pass on this plan, when StepOptions::evaluation states one
    std::optional<InputTiming> input;    // the input pipeline's time per step, when StepOptions::data states one
};

struct StepOptions {
    bool record_timeline = false;
    // false: a plan over its memory still runs through the engine (published runs that did run). A plan that breaks
    // a split, placement or size rule never does: its task graph would be malformed.
    bool skip_engine_if_infeasible = true;
    bool use_profiles = true;                       // apply hardware/profiles/ efficiencies for the chip
    double matmul_fraction_override = 0;            // > 0: use this GEMM efficiency (for fitting)
    const CollectiveTimer* timer = nullptr;         // network backend; nullptr: analytical for this system
    const calib::KernelProfile* kernels = nullptr;  // kernel calibration of the plan's chip (podsim calibrate)
    SimBudget budget;                               // what one simulation may use (--max-tasks, --max-memory)
    std::optional<EvaluationSpec> evaluation;       // also price an evaluation pass (training.evaluation)
    const DataSpec* data = nullptr;                 // the input pipeline (the scenario's data block)
};

inline constexpr const char* kMfuConvention =
    "model FLOPs = tokens x (6 x N_matmul + 6 x layers x heads x (qk_dim + v_dim) x seq_len) (= 12 L H Q T when "
    "qk_dim = v_dim); N_matmul counts active parameters (a token's top_k routed experts, not all of them) and "
    "excludes an untied input embedding; attention not halved for causality (PaLM, Chowdhery et al. 2022, app. B); "
    "over the chip's dense 16-bit (bf16) peak whatever precision the GEMMs run in, so fp8, int8 and fp4 plans may "
    "pass 100%";

StepResult simulate_step(const ModelSpec& m, const SystemSpec& sys, const ParallelPlan& p, const StepOptions& opt = {});

}  // namespace podsim
