// A kernel calibration profile (written by `podsim calibrate`), read back to time ops from what was measured.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace podsim::calib {

struct KernelPoint {
    std::string op, pass, kind;
    double median_s = 0;     // at the measured (shrunk) size
    double min_s = 0;        // fastest repetition: what predictions use (least disturbed by the rest of the host)
    double token_shrink = 1; // measured size / plan size
    double plan_flops = 0, plan_bytes = 0;  // the op's size in the plan it was calibrated for
};

struct KernelProfile {
    std::string file, device;
    std::vector<KernelPoint> points;

    // The measured time of `op` in `pass`, first scaled up from the shrunk measurement to the plan's size, then
    // linearly to this op's size (FLOPs where the op has them, bytes otherwise). nullopt when it was not measured.
    std::optional<double> time_s(const std::string& op, const std::string& pass, double flops, double bytes) const;
};

KernelProfile load_kernel_profile(const std::string& file);  // throws InputError naming the file and path

}  // namespace podsim::calib
