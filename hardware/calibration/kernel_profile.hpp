// A kernel calibration profile (written by `podsim calibrate`), read back to time ops from what was measured.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace podsim::calib {

struct KernelPoint {
    std::string op, pass, kind;
    double min_dim = 0;      // smallest GEMM dimension at plan size
    double median_s = 0;     // at the measured (shrunk) size
    double min_s = 0;        // fastest repetition: what predictions use (least disturbed by the rest of the host)
    double token_shrink = 1; // measured work / plan work (the profile's token_shrink x width_shrink)
    double plan_flops = 0, plan_bytes = 0;  // the op's size in the plan it was calibrated for
};

struct KernelProfile {
    std::string file, device;
    std::string chip;  // the catalog chip the profile stands for ("host-cpu" for a CPU calibration)
    std::vector<KernelPoint> points;
    // Per-kind models fitted from the points, for ops the profile did not measure: GEMM FLOP/s as
    // rate * d / (d + half_dim) with d the smallest GEMM dimension; attention FLOP/s; elementwise bytes/s.
    double matmul_rate = 0, matmul_half_dim = 0, attention_rate = 0, elementwise_rate = 0;
    double adamw_s_per_param = 0;
    // The fastest FLOP/s any measurement or kind rate achieved, and where: above the chip's peak the profile was
    // not measured on that chip (or a trace not on the scenario's model and plan).
    double fastest_flops_per_s = 0;
    std::string fastest_what;

    std::optional<double> fitted_time_s(const std::string& kind, double flops, double bytes, double min_dim) const;

    // The measured time of `op` in `pass`, first scaled up from the shrunk measurement to the plan's size, then
    // linearly to this op's size (FLOPs where the op has them, bytes otherwise). nullopt when it was not measured.
    std::optional<double> time_s(const std::string& op, const std::string& pass, double flops, double bytes) const;
};

KernelProfile load_kernel_profile(const std::string& file);  // throws InputError naming the file and path

}  // namespace podsim::calib
