// The same calibration kernels on an NVIDIA GPU (cuBLAS GEMMs in bf16, CUDA kernels for the rest), timed with CUDA
// events. They live in a module of their own (libpodsim_cuda.so, built only where nvcc and the CUDA toolkit are
// found) that podsim loads on the first call (gpu_kernels_loader.cpp): no other command maps the CUDA runtime and
// cuBLAS (~250 MiB). Without the module, or without a device, every call says why.
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

// What the module exports (one C symbol, podsim_cuda_api, returning its table). Both sides are built together by
// this project's toolchain, so the table holds C++ functions; kApiVersion guards against a stale module.
inline constexpr int kApiVersion = 1;
struct Api {
    int version;
    bool (*available)(std::string* why);
    std::string (*device_name)();
    std::string (*library_versions)();
    Timing (*gemm)(long, long, long, double);
    Timing (*attention)(long, long, long, double);
    Timing (*layernorm)(long, long, double);
    Timing (*gelu)(long, double);
    Timing (*stream_add)(long, double);
    Timing (*adamw)(long, double);
};
using ApiEntry = const Api* (*)();
inline constexpr const char* kApiSymbol = "podsim_cuda_api";
// The module podsim loads: $PODSIM_CUDA_MODULE when set, else libpodsim_cuda.so beside the running executable or
// in podsim's build folder (hardware/plugin_module.hpp).
std::string module_path();

}  // namespace podsim::calib::gpu
