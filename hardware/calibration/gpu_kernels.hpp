// The same calibration kernels on an NVIDIA GPU (cuBLAS GEMMs in bf16, CUDA kernels for the rest), timed with CUDA
// events. Built only where nvcc and the CUDA toolkit are found; elsewhere every call says there is no CUDA.
#pragma once
#include <string>

#include "hardware/calibration/cpu_kernels.hpp"

namespace podsim::calib::gpu {

// False, with the reason, when this build has no CUDA or no device is visible.
bool available(std::string* why);
std::string device_name();
std::string library_versions();

Timing gemm(long m, long n, long k, double budget_s);                  // bf16 in, fp32 accumulate (cublasGemmEx)
Timing attention(long batch_heads, long seq, long head_dim, double budget_s);  // batched QK^T, causal softmax, PV
Timing layernorm(long tokens, long hidden, double budget_s);
Timing gelu(long elements, double budget_s);
Timing stream_add(long elements, double budget_s);
Timing adamw(long params, double budget_s);

}  // namespace podsim::calib::gpu
