#include "hardware/calibration/kernel_profile.hpp"

#include "hardware/json_reader.hpp"

#include <algorithm>
#include <cmath>

namespace podsim::calib {

std::optional<double> KernelProfile::time_s(const std::string& op, const std::string& pass, double flops,
                                            double bytes) const {
    for (const auto& p : points) {
        if (p.op != op || p.pass != pass) continue;
        const double at_plan = p.min_s / p.token_shrink;
        if (p.plan_flops > 0 && flops > 0) return at_plan * flops / p.plan_flops;
        if (p.plan_bytes > 0) return at_plan * bytes / p.plan_bytes;
    }
    return std::nullopt;
}

std::optional<double> KernelProfile::fitted_time_s(const std::string& kind, double flops, double bytes,
                                                   double min_dim) const {
    if (kind == "matmul" && matmul_rate > 0) return flops / (matmul_rate * min_dim / (min_dim + matmul_half_dim));
    if (kind == "attention" && attention_rate > 0) return flops / attention_rate;
    if (kind == "elementwise" && elementwise_rate > 0) return bytes / elementwise_rate;
    return std::nullopt;
}

namespace {

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// rate * d / (d + h) through the GEMM points: for each h on a log grid the best rate is the median of
// rate_i (d_i + h) / d_i; keep the h with the smallest squared log error.
void fit_matmul(KernelProfile& k) {
    std::vector<std::pair<double, double>> pts;  // (min_dim, FLOP/s at plan size)
    for (const auto& p : k.points)
        if (p.kind == "matmul" && p.plan_flops > 0 && p.min_dim > 0)
            pts.emplace_back(p.min_dim, p.plan_flops / (p.min_s / p.token_shrink));
    if (pts.empty()) return;
    double best = 1e300;
    for (double h = 1; h <= 8192; h *= 1.25) {
        std::vector<double> r;
        for (const auto& [d, rate] : pts) r.push_back(rate * (d + h) / d);
        const double rate = median(r);
        double err = 0;
        for (const auto& [d, x] : pts) err += std::pow(std::log(rate * d / (d + h) / x), 2);
        if (err < best) best = err, k.matmul_rate = rate, k.matmul_half_dim = h;
    }
}

}  // namespace

KernelProfile load_kernel_profile(const std::string& file) {
    Json j = load_json_file(file);
    JsonObject o(j, file, "$");
    if (o.string("kind") != "kernel-calibration") o.fail("kind", "expected \"kernel-calibration\"");
    KernelProfile kp;
    kp.file = file;
    kp.device = o.object("device").string("name");
    kp.chip = o.opt_string("chip").value_or("");
    const Json& ms = o.array("measurements");
    for (size_t i = 0; i < ms.size(); ++i) {
        JsonObject m(ms[i], file, "$.measurements[" + std::to_string(i) + "]");
        KernelPoint p;
        p.op = m.string("op");
        p.pass = m.string("pass");
        p.kind = m.string("kind");
        p.median_s = m.positive("median_s");
        // What predictions use: a trace's mean per occurrence (calibrate --from-trace: the step as it ran), else
        // the fastest repetition of a calibration run.
        p.min_s = m.opt_number("mean_s").value_or(m.positive("min_s"));
        if (p.min_s <= 0) m.fail("mean_s", "expected a time > 0");
        // Measured work over the plan's: tokens shrunk for time, and widths where the memory limit cut them.
        p.token_shrink = m.positive("token_shrink") * m.number_in("width_shrink", 1e-12, 1, 1.0);
        p.plan_flops = m.opt_number("plan_flops").value_or(0);
        p.plan_bytes = m.opt_number("plan_bytes").value_or(0);
        p.min_dim = m.opt_number("plan_min_dim").value_or(0);
        kp.points.push_back(p);
    }
    fit_matmul(kp);
    std::vector<double> att, elem;
    for (const auto& p : kp.points) {
        const double at_plan = p.min_s / p.token_shrink;
        if (p.kind == "attention" && p.plan_flops > 0) att.push_back(p.plan_flops / at_plan);
        if (p.kind == "elementwise" && p.plan_bytes > 0) elem.push_back(p.plan_bytes / at_plan);
        if (p.kind == "optimizer" && p.plan_bytes > 0) kp.adamw_s_per_param = at_plan / (p.plan_bytes / 28);
    }
    for (const auto& p : kp.points)
        if ((p.kind == "matmul" || p.kind == "attention") && p.plan_flops > 0 &&
            p.plan_flops / (p.min_s / p.token_shrink) > kp.fastest_flops_per_s)
            kp.fastest_flops_per_s = p.plan_flops / (p.min_s / p.token_shrink), kp.fastest_what = p.op + " (" + p.pass + ")";
    kp.attention_rate = median(att);
    kp.elementwise_rate = median(elem);
    // A trace of vendor kernels gives one rate per kind instead of points (calibrate --from-trace).
    if (o.has("kind_rates")) {
        JsonObject r = o.object("kind_rates");
        if (r.has("matmul") && kp.matmul_rate == 0)
            kp.matmul_rate = r.object("matmul").positive("flops_per_s"), kp.matmul_half_dim = 0;
        if (r.has("attention") && kp.attention_rate == 0)
            kp.attention_rate = r.object("attention").positive("flops_per_s");
        for (const char* kind : {"matmul", "attention"})
            if (r.has(kind) && r.object(kind).positive("flops_per_s") > kp.fastest_flops_per_s)
                kp.fastest_flops_per_s = r.object(kind).positive("flops_per_s"),
                kp.fastest_what = std::string(kind) + " kernels (kind_rates)";
        if (r.has("elementwise") && kp.elementwise_rate == 0)
            kp.elementwise_rate = r.object("elementwise").positive("bytes_per_s");
    }
    return kp;
}

}  // namespace podsim::calib
