#include "hardware/calibration/kernel_profile.hpp"

#include "hardware/json_reader.hpp"

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

KernelProfile load_kernel_profile(const std::string& file) {
    Json j = load_json_file(file);
    JsonObject o(j, file, "$");
    if (o.string("kind") != "kernel-calibration") o.fail("kind", "expected \"kernel-calibration\"");
    KernelProfile kp;
    kp.file = file;
    kp.device = o.object("device").string("name");
    const Json& ms = o.array("measurements");
    for (size_t i = 0; i < ms.size(); ++i) {
        JsonObject m(ms[i], file, "$.measurements[" + std::to_string(i) + "]");
        KernelPoint p;
        p.op = m.string("op");
        p.pass = m.string("pass");
        p.kind = m.string("kind");
        p.median_s = m.positive("median_s");
        p.min_s = m.positive("min_s");
        p.token_shrink = m.positive("token_shrink");
        p.plan_flops = m.opt_number("plan_flops").value_or(0);
        p.plan_bytes = m.opt_number("plan_bytes").value_or(0);
        kp.points.push_back(p);
    }
    return kp;
}

}  // namespace podsim::calib
