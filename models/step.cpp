#include "models/step.hpp"

#include <cmath>

#include "models/result_checks.hpp"

namespace podsim {

StepResult simulate_step(const ModelSpec& m, const SystemSpec& sys, const ParallelPlan& p, const StepOptions& opt) {
    StepResult r;
    const CollectiveTimer local_timer(sys, NetworkBackend::analytical);
    const CollectiveTimer& timer = opt.timer ? *opt.timer : local_timer;
    PricingOptions po;
    po.use_profiles = opt.use_profiles;
    po.matmul_fraction_override = opt.matmul_fraction_override;
    po.kernels = opt.kernels;
    po.budget = opt.budget;
    StepCosts c = price_step(m, sys, p, timer, po);

    r.feasible = c.reject == Reject::none;
    r.infeasible = std::move(c.reasons);
    r.infeasible_paths = std::move(c.reason_paths);
    r.efficiency_source = c.efficiency_source;
    if (!c.structural_ok()) return r;  // split, placement and size rules: no well-formed task graph exists
    r.memory = c.memory;
    r.networks = c.networks;
    r.layer_forward = std::move(c.layer_forward);
    r.layer_backward = std::move(c.layer_backward);
    r.micro_batches = c.micro_batches;
    r.pp = c.pp, r.vpp = c.vpp, r.dp = p.dp;
    for (const ChunkCosts& ck : c.chunks) r.chunk_layers.push_back(ck.layers);
    if (!r.feasible && opt.skip_engine_if_infeasible) return r;

    const LoweredStep low = lower_step(c);
    r.network_backend = timer.backend() == NetworkBackend::analytical
                            ? "analytical (closed-form alpha-beta per topology level)"
                            : "simgrid (" + std::to_string(timer.simulations()) +
                                  " flow-level simulations of every group instance, cached per collective)";
    EngineOptions eo;
    eo.record_timeline = opt.record_timeline;
    r.sim = run_engine(low.graph, eo);
    r.simulated_tasks = low.graph.task_count();
    if (opt.record_timeline) r.timeline = timeline_of(low, r.sim);

    const StageTiming t = engine_timing(low, r.sim);
    const StepSummary sum = summarize(c, t);
    r.step_time_s = t.step_s;
    r.critical_stage = t.critical_stage;
    r.breakdown = sum.breakdown;
    r.tokens_per_step = c.tokens_per_step;
    r.tokens_per_s = sum.tokens_per_s;
    r.model_flops_per_step = c.model_flops_per_step;
    r.hardware_flops_per_step = c.hardware_flops_per_step;
    r.peak_flops_per_s = c.peak_flops_per_s;
    r.peak_name = c.peak_name;
    r.mfu = sum.mfu, r.mfu_causal = sum.mfu_causal, r.hfu = sum.hfu;
    check_physical(r, p, c.utilization_ceiling);
    // The input pipeline runs beside the step on every host; a step it cannot feed waits for it.
    if (opt.data) {
        r.input = input_timing(*opt.data, sys, p.global_batch, m.seq_len);
        const double with = step_with_input_s(r.step_time_s, r.input->per_step_s, opt.data->prefetch_steps);
        if (with > r.step_time_s) {
            const double scale = r.step_time_s / with;
            r.breakdown.input_wait_s = with - r.step_time_s;
            r.step_time_s = with;
            r.tokens_per_s *= scale, r.mfu *= scale, r.mfu_causal *= scale, r.hfu *= scale;
        }
    }
    // The evaluation pass is the same priced step played forward only, by its closed form (closed_form.hpp).
    if (opt.evaluation) {
        r.evaluation = price_eval_pass(c, *opt.evaluation, p, m.seq_len);
        check_figure("eval_pass_s", r.evaluation->pass_s, 0, INFINITY, "evaluation pass");
    }
    return r;
}

}  // namespace podsim
