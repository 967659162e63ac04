#include "hardware/calibration/cpu_kernels.hpp"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

extern "C" char* openblas_get_config();
extern "C" int openblas_get_num_threads();

namespace podsim::calib {

namespace {

using Clock = std::chrono::steady_clock;

// Operand values sin(seed + 0.001 (i mod 9973)): one period computed, then copied, since a sin per element made
// filling gigabyte operands cost seconds.
std::vector<float> filled(size_t n, float seed) {
    constexpr size_t period = 9973;
    std::vector<float> v(n);
    for (size_t i = 0; i < std::min(n, period); ++i) v[i] = std::sin(seed + 0.001f * static_cast<float>(i));
    for (size_t i = period; i < n; i += period) std::memcpy(v.data() + i, v.data(), sizeof(float) * std::min(period, n - i));
    return v;
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

Timing time_kernel(const std::function<void()>& fn, double budget_s, int min_reps) {
    const auto start = Clock::now();
    fn();  // warm-up: page in operands, let OpenBLAS spin up its threads
    std::vector<double> t;
    // Stop before a repetition that would end past the budget (predicted by the last one, or by the warm-up).
    double last_s = seconds_since(start);
    while (t.size() < 50 &&
           (static_cast<int>(t.size()) < std::max(1, min_reps) || seconds_since(start) + last_s <= budget_s)) {
        const auto t0 = Clock::now();
        fn();
        last_s = seconds_since(t0);
        t.push_back(last_s);
    }
    std::sort(t.begin(), t.end());
    return {t[t.size() / 2], t.front(), t.back(), static_cast<int>(t.size())};
}

Timing gemm(long m, long n, long k, double budget_s) {
    // fp32: Debian's OpenBLAS is built without its bf16 GEMM (cblas_sbgemm), so 16-bit plans are timed in fp32.
    std::vector<float> c(size_t(m) * n);
    auto a = filled(size_t(m) * k, 0.1f), b = filled(size_t(k) * n, 0.2f);
    return time_kernel([&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(), n);
    }, budget_s);
}

Timing attention(long bh, long s, long d, bool causal, double budget_s) {
    auto q = filled(size_t(bh) * s * d, 0.3f), k = filled(size_t(bh) * s * d, 0.4f), v = filled(size_t(bh) * s * d, 0.5f);
    std::vector<float> scores(size_t(s) * s), out(size_t(bh) * s * d);
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    return time_kernel([&] {
        for (long h = 0; h < bh; ++h) {
            const float* Q = q.data() + size_t(h) * s * d;
            const float* K = k.data() + size_t(h) * s * d;
            const float* V = v.data() + size_t(h) * s * d;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, s, s, d, scale, Q, d, K, d, 0.0f, scores.data(), s);
            for (long i = 0; i < s; ++i) {  // row softmax, masking the future when causal
                float* row = scores.data() + size_t(i) * s;
                const long n = causal ? i + 1 : s;
                float mx = row[0];
                for (long j = 1; j < n; ++j) mx = std::max(mx, row[j]);
                float sum = 0;
                for (long j = 0; j < n; ++j) sum += (row[j] = std::exp(row[j] - mx));
                const float inv = 1.0f / sum;
                for (long j = 0; j < n; ++j) row[j] *= inv;
                for (long j = n; j < s; ++j) row[j] = 0;
            }
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s, d, s, 1.0f, scores.data(), s, V, d, 0.0f,
                        out.data() + size_t(h) * s * d, d);
        }
    }, budget_s);
}

Timing layernorm(long t, long h, double budget_s) {
    auto x = filled(size_t(t) * h, 0.6f), g = filled(h, 0.7f);
    std::vector<float> y(x.size());
    return time_kernel([&] {
        for (long i = 0; i < t; ++i) {
            const float* r = x.data() + size_t(i) * h;
            float mean = 0, var = 0;
            for (long j = 0; j < h; ++j) mean += r[j];
            mean /= h;
            for (long j = 0; j < h; ++j) var += (r[j] - mean) * (r[j] - mean);
            const float inv = 1.0f / std::sqrt(var / h + 1e-5f);
            float* o = y.data() + size_t(i) * h;
            for (long j = 0; j < h; ++j) o[j] = (r[j] - mean) * inv * g[j];
        }
    }, budget_s);
}

Timing gelu(long n, double budget_s) {
    auto x = filled(n, 0.8f);
    std::vector<float> y(n);
    return time_kernel([&] {
        for (long i = 0; i < n; ++i) {
            const float v = x[i];
            y[i] = 0.5f * v * (1.0f + std::tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
        }
    }, budget_s);
}

Timing swiglu(long n, double budget_s) {
    auto a = filled(n, 0.9f), b = filled(n, 1.0f);
    std::vector<float> y(n);
    return time_kernel([&] {
        for (long i = 0; i < n; ++i) y[i] = a[i] / (1.0f + std::exp(-a[i])) * b[i];
    }, budget_s);
}

Timing adamw(long n, double budget_s) {
    auto p = filled(n, 1.1f), g = filled(n, 1.2f);
    std::vector<float> m(n, 0.0f), v(n, 0.0f);
    return time_kernel([&] {
        const float lr = 1e-4f, b1 = 0.9f, b2 = 0.95f, eps = 1e-8f, wd = 0.1f;
        for (long i = 0; i < n; ++i) {
            m[i] = b1 * m[i] + (1 - b1) * g[i];
            v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
            p[i] -= lr * (m[i] / (std::sqrt(v[i]) + eps) + wd * p[i]);
        }
    }, budget_s);
}

Timing embedding(long t, long h, long vocab, double budget_s) {
    auto table = filled(size_t(vocab) * h, 1.3f);
    std::vector<float> out(size_t(t) * h);
    return time_kernel([&] {
        for (long i = 0; i < t; ++i) {
            const long id = (i * 7919) % vocab;
            std::memcpy(out.data() + size_t(i) * h, table.data() + size_t(id) * h, sizeof(float) * h);
        }
    }, budget_s);
}

Timing cross_entropy(long t, long vocab, double budget_s) {
    auto logits = filled(size_t(t) * vocab, 1.4f);
    std::vector<float> loss(t);
    return time_kernel([&] {
        for (long i = 0; i < t; ++i) {
            const float* r = logits.data() + size_t(i) * vocab;
            float mx = r[0];
            for (long j = 1; j < vocab; ++j) mx = std::max(mx, r[j]);
            float sum = 0;
            for (long j = 0; j < vocab; ++j) sum += std::exp(r[j] - mx);
            loss[i] = std::log(sum) + mx - r[(i * 31) % vocab];
        }
    }, budget_s);
}

Timing stream_add(long n, double budget_s) {
    auto a = filled(n, 1.5f), b = filled(n, 1.6f);
    std::vector<float> y(n);
    return time_kernel([&] {
        for (long i = 0; i < n; ++i) y[i] = a[i] + b[i];
    }, budget_s);
}

const char* to_string(KernelFn fn) {
    switch (fn) {
        case KernelFn::gemm: return "gemm";
        case KernelFn::attention: return "attention";
        case KernelFn::layernorm: return "layernorm";
        case KernelFn::gelu: return "gelu";
        case KernelFn::swiglu: return "swiglu";
        case KernelFn::embedding: return "embedding";
        case KernelFn::cross_entropy: return "cross_entropy";
        case KernelFn::stream_add: return "stream_add";
        case KernelFn::adamw: return "adamw";
    }
    return "?";
}

double footprint_bytes(const KernelShape& s) {
    const double m = double(s.m), n = double(s.n), k = double(s.k);
    switch (s.fn) {
        case KernelFn::gemm: return 4 * (m * k + k * n + m * n);
        case KernelFn::attention: return 4 * (4 * m * n * k + n * n);  // q, k, v, out; one score matrix reused
        case KernelFn::layernorm: return 4 * (2 * m * n + n);
        case KernelFn::gelu: return 8 * m;
        case KernelFn::swiglu: return 12 * m;
        case KernelFn::embedding: return 4 * (k * n + m * n);
        case KernelFn::cross_entropy: return 4 * (m * n + m);
        case KernelFn::stream_add: return 12 * m;
        case KernelFn::adamw: return 16 * m;
    }
    return 0;
}

double estimated_call_s(const KernelShape& s, const KernelRates& r) {
    const double m = double(s.m), n = double(s.n), k = double(s.k);
    const double stream = 1 / r.stream_elems_per_s, ex = 1 / r.exp_elems_per_s;
    double t = 0;
    switch (s.fn) {
        case KernelFn::gemm: t = std::max(2 * m * n * k / r.flops_per_s, (m * k + k * n + m * n) * stream / 3); break;
        case KernelFn::attention: t = m * (4 * n * n * k / r.flops_per_s + n * n * (ex + stream)); break;
        case KernelFn::layernorm: t = 3 * m * n * stream; break;  // mean, variance, normalize
        case KernelFn::gelu: t = m * ex; break;
        case KernelFn::swiglu: t = m * ex; break;
        case KernelFn::embedding: t = m * n * stream; break;
        case KernelFn::cross_entropy: t = m * n * (ex + stream); break;
        case KernelFn::stream_add: t = m * stream; break;
        case KernelFn::adamw: t = 3 * m * stream; break;  // four arrays read, three written, a sqrt each
    }
    return t + r.call_overhead_s;
}

double estimated_setup_s(const KernelShape& s, const KernelRates& r) { return footprint_bytes(s) / r.fill_bytes_per_s; }

Timing run_kernel(const KernelShape& s, double budget_s) {
    switch (s.fn) {
        case KernelFn::gemm: return gemm(s.m, s.n, s.k, budget_s);
        case KernelFn::attention: return attention(s.m, s.n, s.k, true, budget_s);
        case KernelFn::layernorm: return layernorm(s.m, s.n, budget_s);
        case KernelFn::gelu: return gelu(s.m, budget_s);
        case KernelFn::swiglu: return swiglu(s.m, budget_s);
        case KernelFn::embedding: return embedding(s.m, s.n, s.k, budget_s);
        case KernelFn::cross_entropy: return cross_entropy(s.m, s.n, budget_s);
        case KernelFn::stream_add: return stream_add(s.m, budget_s);
        case KernelFn::adamw: return adamw(s.m, budget_s);
    }
    return {};
}

KernelRates probe_cpu_rates() {
    KernelRates r;
    // Each probe: a few milliseconds. The GEMM is small, so its rate is below what large GEMMs reach: estimates
    // err on the long side, and the caller corrects them from each kernel it runs.
    const Timing g = gemm(256, 256, 256, 0.005);
    r.flops_per_s = 2.0 * 256 * 256 * 256 / g.min_s;
    constexpr long n = 1 << 21;
    const auto t0 = Clock::now();
    const Timing a = stream_add(n, 0.005);
    const double total_s = seconds_since(t0);
    r.stream_elems_per_s = n / a.min_s;
    // What the call spent outside its warm-up and timed runs went to allocating and filling its 12 n bytes.
    // (Clamped: the difference of two wall-clock figures can be near zero on a noisy host.)
    r.fill_bytes_per_s = std::clamp(12.0 * n / std::max(1e-6, total_s - (a.reps + 1) * a.median_s), 2e8, 2e10);
    const Timing e = gelu(n / 4, 0.005);
    r.exp_elems_per_s = (n / 4) / e.min_s;
    r.call_overhead_s = stream_add(16, 0.001).min_s + 5e-6;
    return r;
}

HostInfo host_info() {
    HostInfo h;
    std::ifstream cpu("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpu, line)) {
        if (line.rfind("model name", 0) == 0 && h.cpu_model.empty()) h.cpu_model = line.substr(line.find(':') + 2);
        if (line.rfind("processor", 0) == 0) ++h.logical_cpus;
    }
    if (h.logical_cpus == 0) h.logical_cpus = static_cast<int>(std::thread::hardware_concurrency());
    h.blas = openblas_get_config();
    h.blas_threads = openblas_get_num_threads();
    return h;
}

}  // namespace podsim::calib
