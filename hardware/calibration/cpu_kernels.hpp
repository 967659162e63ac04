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

// Runs `fn` once to warm up, then repeats it while another repetition (as long as the last one) still fits in
// `budget_s`, counted from the start of the warm-up: at least `min_reps` (>= 1) and at most 50 repetitions. The
// budget is a bound except for the warm-up and the minimum repetitions, which the caller sizes the kernel for.
Timing time_kernel(const std::function<void()>& fn, double budget_s, int min_reps = 1);

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

// A kernel by its runner and dimensions, so that a caller can size it (time, memory) before running it:
// gemm m x n x k; attention batch*heads m, sequence n, head_dim k; layernorm m rows of n; gelu, swiglu,
// stream_add and adamw m elements (parameters); embedding m tokens of n from a table of k rows; cross_entropy m
// tokens over n classes.
enum class KernelFn { gemm, attention, layernorm, gelu, swiglu, embedding, cross_entropy, stream_add, adamw };
struct KernelShape {
    KernelFn fn = KernelFn::stream_add;
    long m = 0, n = 0, k = 0;
};
const char* to_string(KernelFn fn);

// Bytes of operands the kernel allocates (fp32), all of which it fills before timing.
double footprint_bytes(const KernelShape& s);

// Speeds measured on this machine by a first tiny run of each kind, for the estimates below.
struct KernelRates {
    double flops_per_s = 0;        // a small fp32 GEMM
    double stream_elems_per_s = 0; // y = a + b
    double exp_elems_per_s = 0;    // an element with a transcendental (tanh/exp): GeLU, softmax, cross-entropy
    double fill_bytes_per_s = 0;   // allocating and filling operands
    double call_overhead_s = 0;    // a call of a tiny kernel
};
// One call of the kernel, and the allocation and filling of its operands, at those speeds.
double estimated_call_s(const KernelShape& s, const KernelRates& r);
double estimated_setup_s(const KernelShape& s, const KernelRates& r);

// Runs the CPU kernel of `s` (warm-up and repetitions within `budget_s` as time_kernel).
Timing run_kernel(const KernelShape& s, double budget_s);
// Measures KernelRates with tiny runs of the CPU kernels (a few milliseconds).
KernelRates probe_cpu_rates();

struct HostInfo {
    std::string cpu_model;
    int logical_cpus = 0;
    std::string blas;  // OpenBLAS configuration string
    int blas_threads = 0;
};
HostInfo host_info();

}  // namespace podsim::calib
