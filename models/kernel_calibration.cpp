#include "models/kernel_calibration.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>

#include "hardware/calibration/cpu_kernels.hpp"
#include "hardware/calibration/gpu_kernels.hpp"
#include "models/layer_ops.hpp"
#include "sim/collectives.hpp"

namespace podsim {

namespace {

using calib::KernelFn;
using calib::KernelShape;

// The operands of one kernel may take at most this much memory; wider shapes are cut to fit (and the profile says so).
constexpr double kMaxKernelBytes = 2.0 * (1LL << 30);
// Repetitions a kernel is sized for when the budget allows (after its warm-up); it runs with fewer, down to one,
// when its smallest shape cannot afford them.
constexpr int kTargetReps = 5;
// A kernel at its smallest shape may take up to this many fair shares of the budget left (later kernels then
// shrink more); beyond that it is skipped, with the reason.
constexpr double kMaxShares = 2;
// Kernels are planned against this part of the budget, and a runner's first kernel (before any correction from a
// measured one) is estimated this much longer: estimates from tiny probes err, and the budget is a bound.
constexpr double kPlannedPart = 0.9;
constexpr double kFirstEstimateFactor = 1.5;

// One kernel to measure: its runner at the plan's size, and the axis that carries the tokens (shrunk for time).
struct Job {
    std::string op, kind, pass;
    KernelShape full;       // at the plan's size, widths already cut to the memory limit
    bool tok_in_k = false;  // weight-gradient GEMMs: tokens are the inner dimension k; otherwise m
    long per_tok = 1;       // elements of that axis per token (elementwise kernels: rows x width)
    long tok_full = 1, tok_floor = 1;
    double width_shrink = 1;  // work at `full` over work at the plan's size (< 1 when memory forced a cut)
    std::string note;
    double plan_flops = 0, plan_bytes = 0, plan_min_dim = 0;
};

KernelShape at(const Job& j, long tok) {
    KernelShape s = j.full;
    (j.tok_in_k ? s.k : s.m) = tok * j.per_tok;
    return s;
}

// Largest tok in [lo, hi] with ok(tok), given ok(lo); ok must hold below any tok where it holds.
template <class F>
long largest(long lo, long hi, F&& ok) {
    while (lo < hi) {
        const long mid = lo + (hi - lo + 1) / 2;
        if (ok(mid)) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

// Cuts the widths of a kernel (never its tokens) until its smallest shape fits the memory limit.
void fit_memory(Job& j) {
    auto halve = [](long& d) { return d > 1 ? (d = (d + 1) / 2, true) : false; };
    while (calib::footprint_bytes(at(j, j.tok_floor)) > kMaxKernelBytes) {
        KernelShape& s = j.full;
        const double before = double(s.m) * s.n * s.k;
        bool cut = false;
        if (s.fn == KernelFn::gemm) {
            long& wide = j.tok_in_k ? (s.m > s.n ? s.m : s.n) : (s.n > s.k ? s.n : s.k);
            cut = halve(wide);
            if (cut) j.width_shrink *= double(s.m) * s.n * s.k / before;
        } else if (s.fn == KernelFn::attention) {
            const double seq = double(s.n);
            cut = halve(s.n);
            if (cut) j.width_shrink *= (s.n / seq) * (s.n / seq);
        } else if (s.fn == KernelFn::embedding) {
            cut = halve(s.k);  // table rows: the lookup's work does not depend on them
        }
        if (!cut) break;
        j.note = fmt::format("shape cut to fit the {:.0f} GiB per-kernel memory limit", kMaxKernelBytes / (1 << 30));
    }
}

// The elementwise kernel of an op: tokens x its width, run as the op's own computation.
void elementwise_job(Job& j, const ModelSpec& m, const ParallelPlan& p, long tokens) {
    // Backward passes read and write about twice as much: the forward kernel on twice the rows.
    const long rows = j.pass == "backward" ? 2 : 1;
    const long h = static_cast<long>(m.hidden), fw = static_cast<long>(m.ffn_hidden / p.tp),
               v = static_cast<long>(m.vocab / p.tp);
    j.tok_full = tokens, j.tok_floor = std::min(64L, tokens);
    if (j.op.find("norm") != std::string::npos) j.full = {KernelFn::layernorm, 0, h, 0}, j.per_tok = rows;
    else if (j.op.find("mlp.act") != std::string::npos)
        j.full = {m.gated() ? KernelFn::swiglu : KernelFn::gelu, 0, 0, 0}, j.per_tok = rows * fw;
    else if (j.op == "cross_entropy") j.full = {KernelFn::cross_entropy, 0, v, 0};
    else if (j.op == "cross_entropy.bwd") j.full = {KernelFn::stream_add, 0, 0, 0}, j.per_tok = v;
    else if (j.op == "embedding.lookup") j.full = {KernelFn::embedding, 0, h, static_cast<long>(m.vocab)};
    else j.full = {KernelFn::stream_add, 0, 0, 0}, j.per_tok = rows * h;  // residual adds, embedding gradient, rope
}

// The plan's distinct kernels: one layer forward and backward, the logits, the embedding, then AdamW.
std::vector<Job> plan_jobs(const ModelSpec& m, const ParallelPlan& p) {
    const LayerOps L = layer_ops(m, p), H = head_ops(m, p), E = embedding_ops(m, p);
    const std::vector<std::pair<const char*, const std::vector<Op>*>> passes = {
        {"forward", &L.forward}, {"backward", &L.backward}, {"forward", &H.forward}, {"backward", &H.backward},
        {"forward", &E.forward}, {"backward", &E.backward}};
    const long tokens = std::max(1L, static_cast<long>(double(p.micro_batch) * m.seq_len / p.cp));
    std::vector<Job> jobs;
    std::set<std::string> seen;
    for (const auto& [pass, ops] : passes) {
        for (const auto& o : *ops) {
            if (o.kind == OpKind::collective || o.kernels == 0) continue;  // no kernel of its own (a fused cast)
            Job j;
            j.op = o.name, j.pass = pass;
            j.plan_flops = o.flops, j.plan_bytes = o.bytes, j.plan_min_dim = std::min({o.m, o.n, o.k});
            if (o.kind == OpKind::matmul && !in_attention_core(o)) {
                j.kind = "matmul";
                // The token dimension of a weight GEMM is m (dgrad, forward) or k (wgrad).
                j.tok_in_k = o.pass == OpPass::backward_weight;
                j.full = {KernelFn::gemm, std::max(1L, static_cast<long>(o.m)), std::max(1L, static_cast<long>(o.n)),
                          std::max(1L, static_cast<long>(o.k))};
                j.tok_full = j.tok_in_k ? j.full.k : j.full.m;
                j.tok_floor = std::min(64L, j.tok_full);  // below this a GEMM turns into a matrix-vector product
            } else if (in_attention_core(o)) {
                if (o.role == OpRole::attention_softmax || is_backward(o)) continue;
                // One kernel: QK^T, causal softmax, PV (the forward of core.qk + softmax + core.pv); batch x heads
                // carry the shrinking.
                j.kind = "attention", j.op = "attention";
                const long bh = std::max(1L, static_cast<long>(p.micro_batch * (m.heads / p.tp)));
                j.full = {KernelFn::attention, bh, std::max(1L, static_cast<long>(m.seq_len / p.cp)),
                          static_cast<long>(m.head_dim)};
                j.tok_full = bh, j.tok_floor = 1;
                j.plan_flops = 4.0 * double(p.micro_batch) * (m.heads / p.tp) * (double(m.seq_len) / p.cp) *
                               double(m.seq_len) * double(m.head_dim);
            } else {
                j.kind = "elementwise";
                elementwise_job(j, m, p, tokens);
            }
            const std::string key = fmt::format("{}:{}:{}:{}:{}:{}:{}", j.kind, calib::to_string(j.full.fn), j.full.m,
                                                j.full.n, j.full.k, j.per_tok, j.op);
            if (!seen.insert(key).second) continue;
            fit_memory(j);
            jobs.push_back(j);
        }
    }
    // AdamW over this device's parameter shard.
    Job a;
    a.op = "adamw", a.pass = "optimizer", a.kind = "optimizer";
    a.tok_full = std::max(1L, static_cast<long>(m.params_per_layer() / p.tp));
    a.tok_floor = std::min(100'000L, a.tok_full);
    a.full = {KernelFn::adamw, 0, 0, 0};
    jobs.push_back(a);
    return jobs;
}

// The speeds of this device's kernels, from tiny runs (milliseconds).
calib::KernelRates probe_rates(bool cuda) {
    if (!cuda) return calib::probe_cpu_rates();
    calib::KernelRates r;
    const auto g = calib::gpu::gemm(2048, 2048, 2048, 0.01);
    r.flops_per_s = 2.0 * 2048 * 2048 * 2048 / g.min_s;
    constexpr long n = 1 << 24;
    const auto t0 = std::chrono::steady_clock::now();
    const auto a = calib::gpu::stream_add(n, 0.01);
    const double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.stream_elems_per_s = n / a.min_s;
    r.fill_bytes_per_s = std::clamp(12.0 * n / std::max(1e-6, total_s - (a.reps + 1) * a.median_s), 1e9, 1e12);
    r.exp_elems_per_s = n / calib::gpu::gelu(n, 0.01).min_s;
    r.call_overhead_s = calib::gpu::stream_add(16, 0.001).min_s + 10e-6;
    return r;
}

// The CUDA runner of a kernel: cuBLAS bf16 GEMMs, batched attention with a causal softmax kernel, CUDA elementwise
// kernels (SwiGLU is timed as GeLU over both inputs, cross-entropy and embedding as streaming passes of their size).
calib::Timing run_gpu(const KernelShape& s, double budget_s) {
    switch (s.fn) {
        case KernelFn::gemm: return calib::gpu::gemm(s.m, s.n, s.k, budget_s);
        case KernelFn::attention: return calib::gpu::attention(s.m, s.n, s.k, budget_s);
        case KernelFn::layernorm: return calib::gpu::layernorm(s.m, s.n, budget_s);
        case KernelFn::gelu: return calib::gpu::gelu(s.m, budget_s);
        case KernelFn::swiglu: return calib::gpu::gelu(2 * s.m, budget_s);
        case KernelFn::embedding:
        case KernelFn::cross_entropy: return calib::gpu::stream_add(s.m * s.n, budget_s);
        case KernelFn::stream_add: return calib::gpu::stream_add(s.m, budget_s);
        case KernelFn::adamw: return calib::gpu::adamw(s.m, budget_s);
    }
    return {};
}

double since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string shape_text(const Job& j, const KernelShape& s, long tok) {
    if (j.kind == "elementwise" || j.kind == "optimizer") return fmt::format("{}", tok);
    return fmt::format("{}x{}x{}", s.m, s.n, s.k);
}

}  // namespace

Json calibrate_kernels(const ModelSpec& m, const ParallelPlan& p, double budget_s, std::string& table,
                       CalibrationDevice device, CalibrationSummary* summary) {
    const auto start = std::chrono::steady_clock::now();
    const bool cuda = device == CalibrationDevice::cuda;
    const calib::KernelRates rates = probe_rates(cuda);
    const std::vector<Job> jobs = plan_jobs(m, p);
    // Measured time over estimated time of the last kernel of each runner: the tiny probes misjudge large kernels.
    std::map<KernelFn, double> correction;
    CalibrationSummary sum;
    sum.budget_s = budget_s, sum.memory_limit_bytes = kMaxKernelBytes;
    double worst_overrun_s = 0;
    Json ms = Json::array();
    for (size_t i = 0; i < jobs.size(); ++i) {
        const Job& j = jobs[i];
        const double left_s = std::max(0.0, kPlannedPart * budget_s - since(start));
        const double share_s = left_s / double(jobs.size() - i);
        const double corr = correction.count(j.full.fn) ? correction[j.full.fn] : kFirstEstimateFactor;
        auto cost_s = [&](long tok, int reps) {
            const KernelShape s = at(j, tok);
            return corr * (calib::estimated_setup_s(s, rates) + (1 + reps) * calib::estimated_call_s(s, rates));
        };
        // Tokens: as many as memory allows and the kernel's share affords with its warm-up and kTargetReps
        // repetitions; at its smallest shape with fewer repetitions if only that fits; else skipped.
        const long tok_mem = largest(j.tok_floor, j.tok_full,
                                     [&](long t) { return calib::footprint_bytes(at(j, t)) <= kMaxKernelBytes; });
        long tok = j.tok_floor;
        if (cost_s(j.tok_floor, kTargetReps) <= share_s)
            tok = largest(j.tok_floor, tok_mem, [&](long t) { return cost_s(t, kTargetReps) <= share_s; });
        const double allowed_s = std::min(left_s, kMaxShares * share_s);
        if (cost_s(tok, 1) > allowed_s) {
            const KernelShape s = at(j, tok);
            sum.skipped.push_back({{"op", j.op}, {"pass", j.pass}, {"kind", j.kind},
                                   {"smallest_shape", shape_text(j, s, tok)}, {"estimated_s", cost_s(tok, 1)},
                                   {"reason", fmt::format("would take ~{:.3g} s at its smallest shape (warm-up and one "
                                                          "repetition), over the {:.3g} s of the budget it may use",
                                                          cost_s(tok, 1), allowed_s)}});
            if (!j.note.empty()) sum.skipped.back()["note"] = j.note;
            table += fmt::format("{:<28} {:<9} {:<11} {:>22} {:>9} {:>10} {:>8}\n", j.op, j.pass, j.kind,
                                 shape_text(j, s, tok), "skipped", "-", "-");
            continue;
        }
        const KernelShape s = at(j, tok);
        const double setup_est_s = corr * calib::estimated_setup_s(s, rates);
        const auto t0 = std::chrono::steady_clock::now();
        const calib::Timing t = cuda ? run_gpu(s, std::max(share_s - setup_est_s, 0.0))
                                     : calib::run_kernel(s, std::max(share_s - setup_est_s, 0.0));
        const double took_s = since(t0);
        const double raw_s = calib::estimated_setup_s(s, rates) + (1 + t.reps) * calib::estimated_call_s(s, rates);
        correction[j.full.fn] = std::clamp(took_s / raw_s, 0.05, 100.0);
        if (took_s - std::max(share_s, cost_s(tok, 1)) > worst_overrun_s) {
            worst_overrun_s = took_s - std::max(share_s, cost_s(tok, 1));
            sum.overrun_cause = fmt::format("{} ({}) took {:.3g} s against an estimated {:.3g} s", j.op, j.pass, took_s,
                                            cost_s(tok, 1));
        }
        const double footprint = calib::footprint_bytes(s);
        sum.largest_kernel_bytes = std::max(sum.largest_kernel_bytes, footprint);
        ++sum.measured;

        Json m_j;
        const double tok_shrink = double(tok) / double(j.tok_full);
        if (j.kind == "optimizer") {
            // The profile keeps seconds per parameter: the parameters measured stand for the plan's.
            m_j = {{"op", "adamw"}, {"pass", "optimizer"}, {"kind", "optimizer"}, {"shape", {{"params", s.m}}},
                   {"bytes", s.m * 28.0}, {"token_shrink", 1.0}, {"plan_bytes", s.m * 28.0},
                   {"bytes_per_s", t.median_s > 0 ? s.m * 28.0 / t.median_s : 0.0}};
        } else {
            double flops = 0, bytes = 0;
            if (j.kind == "matmul") {
                flops = 2.0 * s.m * s.n * s.k;
                bytes = 2.0 * (double(s.m) * s.k + double(s.k) * s.n + double(s.m) * s.n);
            } else if (j.kind == "attention") {
                flops = 4.0 * s.m * s.n * s.n * s.k;
                bytes = 4.0 * (4.0 * s.m * s.n * s.k + double(s.m) * s.n * s.n);
            } else {
                bytes = j.plan_bytes * tok_shrink;
            }
            m_j = {{"op", j.op}, {"pass", j.pass}, {"kind", j.kind},
                   {"shape", j.kind == "elementwise" ? Json{{"tokens", tok}} : Json{{"m", s.m}, {"n", s.n}, {"k", s.k}}},
                   {"token_shrink", tok_shrink}, {"flops", flops}, {"bytes", bytes}, {"plan_flops", j.plan_flops},
                   {"plan_bytes", j.plan_bytes}, {"plan_min_dim", j.plan_min_dim},
                   {"flops_per_s", t.median_s > 0 ? flops / t.median_s : 0.0},
                   {"bytes_per_s", t.median_s > 0 ? bytes / t.median_s : 0.0}};
            if (j.width_shrink < 1) m_j["width_shrink"] = j.width_shrink;
        }
        m_j["median_s"] = t.median_s, m_j["min_s"] = t.min_s, m_j["max_s"] = t.max_s, m_j["reps"] = t.reps;
        m_j["spread_pct"] = t.spread_pct();
        m_j["footprint_bytes"] = footprint;
        if (!j.note.empty()) m_j["note"] = j.note;
        ms.push_back(m_j);
        table += fmt::format("{:<28} {:<9} {:<11} {:>22} {:>9.3f} {:>10.1f} {:>8.1f}\n", j.op, j.pass, j.kind,
                             shape_text(j, s, tok), t.median_s * 1e3,
                             t.median_s > 0 ? m_j.value("flops", 0.0) / t.median_s / 1e9 : 0.0, t.spread_pct());
    }
    sum.elapsed_s = since(start);
    if (sum.elapsed_s <= budget_s) sum.overrun_cause.clear();
    else if (sum.overrun_cause.empty()) sum.overrun_cause = "the kernels together ran longer than estimated";
    if (summary) *summary = sum;
    return ms;
}

ModelSpec cpu_gpt_model(const calib::TinyGpt& t) {
    ModelSpec m;
    m.name = "cpu-gpt";
    m.layers = t.layers, m.hidden = t.hidden, m.heads = t.heads, m.kv_heads = t.heads, m.head_dim = t.hidden / t.heads;
    m.ffn_hidden = t.ffn, m.vocab = t.vocab, m.seq_len = t.seq;
    m.activation = Activation::gelu, m.norm = Norm::layernorm, m.position = Position::none;
    m.bias = false, m.dropout = false, m.tied_embeddings = false;
    return m;
}

ParallelPlan cpu_gpt_plan(const calib::TinyGpt& t, int ranks) {
    ParallelPlan p;
    p.dp = ranks;
    p.micro_batch = t.micro_batch;
    p.global_batch = static_cast<long long>(t.micro_batch) * t.micro_batches * ranks;
    p.attention = AttentionKernel::standard;
    p.recompute = Recompute::none;
    p.dp_overlap = false;        // all-reduce after the backward, tensor by tensor
    p.grad_reduce_bytes = 4;     // fp32 gradients
    p.master_weight_bytes = 4;
    p.compute_weight_copy = false;
    return p;
}

double predict_allreduce_s(const std::vector<size_t>& tensor_bytes, int ranks, double bytes_per_s, double latency_s) {
    GroupNetwork net;
    net.levels.push_back({ranks, bytes_per_s, latency_s, ranks - 1, "loopback"});
    double t = 0;
    for (size_t b : tensor_bytes) t += collective_cost(Collective::all_reduce, double(b), net).time_s;
    return t;
}

}  // namespace podsim
