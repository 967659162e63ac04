#include "models/result_checks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "models/step.hpp"

namespace podsim {

std::string plan_label(const ParallelPlan& p) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "dp %d tp %d pp %d vpp %d cp %d ep %d zero %d mb %lld gbs %lld %s recompute %s",
                  p.dp, p.tp, p.pp, p.vpp, p.cp, p.ep, p.zero, p.micro_batch, p.global_batch, to_string(p.precision),
                  to_string(p.recompute));
    return p.offload_layers > 0 ? std::string(buf) + " offload " + std::to_string(p.offload_layers) : std::string(buf);
}

void check_figure(const char* name, double value, double lo, double hi, const std::string& context) {
    if (std::isfinite(value) && value >= lo && value <= hi) return;
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s = %g is outside its physical range [%g, %g]", name, value, lo, hi);
    throw InternalError(std::string(buf) + " (" + context + "); this is a bug in podsim, please report it");
}

double utilization_ceiling(const ChipSpec& chip, Precision precision) {
    const double bf16 = chip.peak_bf16_flops_per_s;
    const double own = precision == Precision::fp8    ? chip.peak_fp8_flops_per_s
                       : precision == Precision::int8 ? chip.peak_int8_ops_per_s
                       : precision == Precision::fp4  ? chip.peak_fp4_flops_per_s
                       : precision == Precision::fp16 ? chip.peak_fp16_flops_per_s
                                                      : bf16;
    return std::max(1.0, own / bf16);
}

void check_physical(const StepResult& r, const ParallelPlan& p, double ceiling) {
    if (!r.feasible) return;
    const std::string at = "plan " + plan_label(p);
    const double inf = INFINITY;
    // "> 0" for times and rates: the smallest positive double stands in for the open bound.
    check_figure("step_time_s", r.step_time_s, 1e-300, inf, at);
    check_figure("tokens_per_s", r.tokens_per_s, 1e-300, inf, at);
    check_figure("compute_s", r.breakdown.compute_s, 0, inf, at);
    check_figure("exposed_comm_s", r.breakdown.exposed_comm_s, 0, inf, at);
    check_figure("bubble_s", r.breakdown.bubble_s, 0, inf, at);
    check_figure("optimizer_s", r.breakdown.optimizer_s, 0, inf, at);
    check_figure("model_flops_per_step", r.model_flops_per_step, 0, inf, at);
    check_figure("hardware_flops_per_step", r.hardware_flops_per_step, 0, inf, at);
    check_figure("mfu", r.mfu, 1e-300, ceiling, at);
    check_figure("mfu_causal", r.mfu_causal, 1e-300, ceiling, at);
    check_figure("hfu", r.hfu, 1e-300, ceiling, at);
    check_figure("memory.total_bytes", r.memory.total_bytes, 0, inf, at);
}

}  // namespace podsim
