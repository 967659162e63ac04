// The GPU runner of a build without CUDA: it says so, and nothing else.
#include <stdexcept>

#include "hardware/calibration/gpu_kernels.hpp"

namespace podsim::calib::gpu {

namespace {
[[noreturn]] void none() { throw std::runtime_error("this build of podsim has no CUDA (nvcc was not found)"); }
}  // namespace

bool available(std::string* why) {
    if (why) *why = "this build of podsim has no CUDA (nvcc and the CUDA toolkit were not found when it was configured)";
    return false;
}
std::string device_name() { none(); }
std::string library_versions() { none(); }
Timing gemm(long, long, long, double) { none(); }
Timing attention(long, long, long, double) { none(); }
Timing layernorm(long, long, double) { none(); }
Timing gelu(long, double) { none(); }
Timing stream_add(long, double) { none(); }
Timing adamw(long, double) { none(); }

}  // namespace podsim::calib::gpu
