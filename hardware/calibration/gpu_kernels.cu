// GPU calibration kernels: cuBLAS for GEMMs, small CUDA kernels for the rest, CUDA events for timing.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "hardware/calibration/gpu_kernels.hpp"

// The kernels are defined in an inner namespace: podsim's own podsim::calib::gpu functions are the loader's.
namespace podsim::calib::gpu::device {

namespace {

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
void check(cublasStatus_t s, const char* what) {
    if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(s));
}

template <typename T>
struct Buffer {
    T* p = nullptr;
    explicit Buffer(size_t n) { check(cudaMalloc(&p, n * sizeof(T) + 16), "cudaMalloc"); check(cudaMemset(p, 0, n * sizeof(T)), "cudaMemset"); }
    ~Buffer() { cudaFree(p); }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
};

// Warm-up, then repetitions (each timed with events) while another one, as long as the last, still fits in the
// budget counted from the start of the warm-up: at least one, at most 100 (as time_kernel on the CPU).
template <typename F>
Timing time_gpu(F&& launch, double budget_s) {
    cudaEvent_t a, b;
    check(cudaEventCreate(&a), "event");
    check(cudaEventCreate(&b), "event");
    const auto start = std::chrono::steady_clock::now();
    launch();
    check(cudaDeviceSynchronize(), "warm-up");
    std::vector<double> t;
    double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double last = spent;
    while (t.size() < 100 && (t.empty() || spent + last <= budget_s)) {
        check(cudaEventRecord(a), "record");
        launch();
        check(cudaEventRecord(b), "record");
        check(cudaEventSynchronize(b), "sync");
        float ms = 0;
        check(cudaEventElapsedTime(&ms, a, b), "elapsed");
        t.push_back(ms / 1e3);
        last = ms / 1e3;
        spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    std::sort(t.begin(), t.end());
    return {t[t.size() / 2], t.front(), t.back(), static_cast<int>(t.size())};
}

cublasHandle_t handle() {
    static cublasHandle_t h = [] {
        cublasHandle_t x;
        check(cublasCreate(&x), "cublasCreate");
        return x;
    }();
    return h;
}

__global__ void layernorm_kernel(const float* x, float* y, int h) {
    const float* r = x + size_t(blockIdx.x) * h;
    float* o = y + size_t(blockIdx.x) * h;
    __shared__ float s_mean, s_rstd;
    float sum = 0, sq = 0;
    for (int j = threadIdx.x; j < h; j += blockDim.x) sum += r[j], sq += r[j] * r[j];
    for (int off = 16; off > 0; off /= 2) sum += __shfl_down_sync(0xffffffff, sum, off), sq += __shfl_down_sync(0xffffffff, sq, off);
    __shared__ float ws[32], wq[32];
    if (threadIdx.x % 32 == 0) ws[threadIdx.x / 32] = sum, wq[threadIdx.x / 32] = sq;
    __syncthreads();
    if (threadIdx.x == 0) {
        float a = 0, q = 0;
        for (int w = 0; w < (blockDim.x + 31) / 32; ++w) a += ws[w], q += wq[w];
        s_mean = a / h;
        s_rstd = rsqrtf(q / h - s_mean * s_mean + 1e-5f);
    }
    __syncthreads();
    for (int j = threadIdx.x; j < h; j += blockDim.x) o[j] = (r[j] - s_mean) * s_rstd;
}

__global__ void gelu_kernel(const float* x, float* y, long n) {
    for (long i = blockIdx.x * long(blockDim.x) + threadIdx.x; i < n; i += long(gridDim.x) * blockDim.x) {
        const float v = x[i];
        y[i] = 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
    }
}

__global__ void add_kernel(const float* a, const float* b, float* y, long n) {
    for (long i = blockIdx.x * long(blockDim.x) + threadIdx.x; i < n; i += long(gridDim.x) * blockDim.x) y[i] = a[i] + b[i];
}

__global__ void adamw_kernel(float* p, const float* g, float* m, float* v, long n) {
    for (long i = blockIdx.x * long(blockDim.x) + threadIdx.x; i < n; i += long(gridDim.x) * blockDim.x) {
        m[i] = 0.9f * m[i] + 0.1f * g[i];
        v[i] = 0.95f * v[i] + 0.05f * g[i] * g[i];
        p[i] -= 1e-4f * (m[i] / (sqrtf(v[i]) + 1e-8f) + 0.1f * p[i]);
    }
}

// Causal softmax over rows of length s, in place (one block per row).
__global__ void causal_softmax_kernel(float* x, int s) {
    float* r = x + size_t(blockIdx.x) * s;
    const int row = blockIdx.x % s, n = row + 1;
    __shared__ float s_max, s_sum;
    if (threadIdx.x == 0) {
        float mx = r[0];
        for (int j = 1; j < n; ++j) mx = fmaxf(mx, r[j]);
        float sum = 0;
        for (int j = 0; j < n; ++j) sum += __expf(r[j] - mx);
        s_max = mx, s_sum = sum;
    }
    __syncthreads();
    for (int j = threadIdx.x; j < s; j += blockDim.x) r[j] = j < n ? __expf(r[j] - s_max) / s_sum : 0.0f;
}

constexpr int kBlocks = 1024, kThreads = 256;

}  // namespace

bool available(std::string* why) {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        if (why) *why = std::string("no CUDA device is visible (") + (e == cudaSuccess ? "0 devices" : cudaGetErrorString(e)) + ")";
        return false;
    }
    return true;
}

std::string device_name() {
    cudaDeviceProp p{};
    check(cudaGetDeviceProperties(&p, 0), "cudaGetDeviceProperties");
    return p.name;
}

std::string library_versions() {
    int rt = 0, drv = 0, cb = 0;
    cudaRuntimeGetVersion(&rt);
    cudaDriverGetVersion(&drv);
    cublasGetVersion(handle(), &cb);
    return "CUDA runtime " + std::to_string(rt) + ", driver " + std::to_string(drv) + ", cuBLAS " + std::to_string(cb);
}

Timing gemm(long m, long n, long k, double budget_s) {
    Buffer<__nv_bfloat16> a(size_t(m) * k), b(size_t(k) * n);
    Buffer<float> c(size_t(m) * n);
    const float one = 1, zero = 0;
    // Row-major C[m,n] = A[m,k] B[k,n] is column-major C^T = B^T A^T.
    return time_gpu([&] {
        check(cublasGemmEx(handle(), CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b.p, CUDA_R_16BF, n, a.p, CUDA_R_16BF, k,
                           &zero, c.p, CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
              "cublasGemmEx");
    }, budget_s);
}

Timing attention(long bh, long s, long d, double budget_s) {
    Buffer<float> q(size_t(bh) * s * d), k(size_t(bh) * s * d), v(size_t(bh) * s * d), sc(size_t(bh) * s * s),
        o(size_t(bh) * s * d);
    const float scale = 1.0f / sqrtf(float(d)), one = 1, zero = 0;
    return time_gpu([&] {
        check(cublasSgemmStridedBatched(handle(), CUBLAS_OP_T, CUBLAS_OP_N, s, s, d, &scale, k.p, d, s * d, q.p, d,
                                        s * d, &zero, sc.p, s, s * s, bh),
              "scores");
        causal_softmax_kernel<<<unsigned(bh * s), 128>>>(sc.p, int(s));
        check(cublasSgemmStridedBatched(handle(), CUBLAS_OP_N, CUBLAS_OP_N, d, s, s, &one, v.p, d, s * d, sc.p, s,
                                        s * s, &zero, o.p, d, s * d, bh),
              "pv");
    }, budget_s);
}

Timing layernorm(long t, long h, double budget_s) {
    Buffer<float> x(size_t(t) * h), y(size_t(t) * h);
    return time_gpu([&] { layernorm_kernel<<<unsigned(t), 256>>>(x.p, y.p, int(h)); }, budget_s);
}

Timing gelu(long n, double budget_s) {
    Buffer<float> x(n), y(n);
    return time_gpu([&] { gelu_kernel<<<kBlocks, kThreads>>>(x.p, y.p, n); }, budget_s);
}

Timing stream_add(long n, double budget_s) {
    Buffer<float> a(n), b(n), y(n);
    return time_gpu([&] { add_kernel<<<kBlocks, kThreads>>>(a.p, b.p, y.p, n); }, budget_s);
}

Timing adamw(long n, double budget_s) {
    Buffer<float> p(n), g(n), m(n), v(n);
    return time_gpu([&] { adamw_kernel<<<kBlocks, kThreads>>>(p.p, g.p, m.p, v.p, n); }, budget_s);
}

}  // namespace podsim::calib::gpu::device

extern "C" __attribute__((visibility("default"))) const podsim::calib::gpu::Api* podsim_cuda_api() {
    namespace d = podsim::calib::gpu::device;
    static const podsim::calib::gpu::Api api{podsim::calib::gpu::kApiVersion,
                                             &d::available,
                                             &d::device_name,
                                             &d::library_versions,
                                             &d::gemm,
                                             &d::attention,
                                             &d::layernorm,
                                             &d::gelu,
                                             &d::stream_add,
                                             &d::adamw};
    return &api;
}
