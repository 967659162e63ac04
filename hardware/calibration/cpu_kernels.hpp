// Real training-step kernels on the host CPU (OpenBLAS GEMMs and plain C++ loops), timed with warm-up and
// repetitions: the measurement side of calibration. Shapes come from the caller; nothing here knows a model.
#pragma once
#include <functional>
#include <string>

namespace podsim::calib {

struct Timing {
    double median_s = 0, min_s = 0, max_s = 0;
    int reps = 0;
    double spread_pct() const { return median_s > 0 ? 100 * (max_s - min_s) / median_s : 0; }
};

// Runs `fn` once to warm up, then repeats it until `budget_s` is spent (at least `min_reps`, at most 50 times).
Timing time_kernel(const std::function<void()>& fn, double budget_s, int min_reps = 5);

// Each kernel allocates its operands, fills them, and returns its timing; FLOPs/bytes are the caller's to count.
Timing gemm(long m, long n, long k, double budget_s);  // C[m,n] = A[m,k] B[k,n], fp32
Timing attention(long batch_heads, long seq, long head_dim, bool causal, double budget_s);  // softmax(QK^T)V
Timing layernorm(long tokens, long hidden, double budget_s);
Timing gelu(long elements, double budget_s);
Timing swiglu(long elements, double budget_s);      // silu(a) * b over two inputs of `elements`
Timing adamw(long params, double budget_s);         // fp32 params, grads, m, v
Timing embedding(long tokens, long hidden, long vocab, double budget_s);
Timing cross_entropy(long tokens, long vocab, double budget_s);
Timing stream_add(long elements, double budget_s);  // y = a + b: residual adds, dropout-free bias/residual passes

struct HostInfo {
    std::string cpu_model;
    int logical_cpus = 0;
    std::string blas;  // OpenBLAS configuration string
    int blas_threads = 0;
};
HostInfo host_info();

}  // namespace podsim::calib
