#include "models/kernel_calibration.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

#include "hardware/calibration/cpu_kernels.hpp"
#include "hardware/calibration/gpu_kernels.hpp"
#include "models/layer_ops.hpp"
#include "sim/collectives.hpp"

namespace podsim {

namespace {

// A rough speed of one host CPU (2 cores, AVX2 OpenBLAS ~150 GFLOP/s fp32), only to size the shrunk shapes so that
// the budget holds; shrinking more than needed measures GEMMs off their real shape.
constexpr double kAssumedCpuFlopsPerS = 100e9;
constexpr double kAssumedCpuBytesPerS = 10e9;

struct Planned {
    std::string op, kind, pass;
    long m = 0, n = 0, k = 0;  // GEMM shape after shrinking
    long elements = 0;         // elementwise ops: elements after shrinking
    double flops = 0, bytes = 0;
    double plan_flops = 0, plan_bytes = 0;  // the op's full size in the plan
    double plan_min_dim = 0;                 // its smallest GEMM dimension
    double shrink = 1;         // measured tokens / plan tokens
};

}  // namespace

Json calibrate_kernels(const ModelSpec& m, const ParallelPlan& p, double budget_s, std::string& table,
                       CalibrationDevice device) {
    const bool cuda = device == CalibrationDevice::cuda;
    // A GPU is ~1000x the host CPU: size the shrunk shapes for it.
    const double flops_per_s = cuda ? 1000 * kAssumedCpuFlopsPerS : kAssumedCpuFlopsPerS;
    const double bytes_per_s = cuda ? 100 * kAssumedCpuBytesPerS : kAssumedCpuBytesPerS;
    const LayerOps L = layer_ops(m, p);
    const LayerOps H = head_ops(m, p);
    const LayerOps E = embedding_ops(m, p);

    // Distinct kernels of one layer (forward and backward) and of the logits, each measured once.
    std::vector<std::pair<const char*, const std::vector<Op>*>> passes = {
        {"forward", &L.forward}, {"backward", &L.backward}, {"forward", &H.forward}, {"backward", &H.backward},
        {"forward", &E.forward}, {"backward", &E.backward}};
    std::vector<Planned> plan;
    std::map<std::string, bool> seen;
    size_t kernels = 0;
    for (const auto& [pass, ops] : passes)
        for (const auto& o : *ops) kernels += o.kind != OpKind::collective;
    const double per_kernel_s = budget_s / std::max<size_t>(1, kernels + 1);
    const double tokens = double(p.micro_batch) * m.seq_len / p.cp;
    for (const auto& [pass, ops] : passes) {
        for (const auto& o : *ops) {
            if (o.kind == OpKind::collective) continue;
            Planned k;
            k.op = o.name, k.pass = pass;
            // One call should take about a fifth of its share of the budget at the assumed speed.
            const double cap_s = per_kernel_s / 5;
            if (o.kind == OpKind::matmul && o.name.rfind("core.", 0) != 0) {
                k.kind = "matmul";
                // The token dimension of a weight GEMM is m (dgrad, forward) or k (wgrad): shrink that one.
                const bool wgrad = o.name.find(".wgrad") != std::string::npos;
                const double tok = wgrad ? o.k : o.m;
                k.shrink = std::clamp(cap_s * flops_per_s / o.flops, 64.0 / tok, 1.0);
                k.m = static_cast<long>(o.m * (wgrad ? 1 : k.shrink)), k.n = static_cast<long>(o.n);
                k.k = static_cast<long>(o.k * (wgrad ? k.shrink : 1));
                k.flops = 2.0 * k.m * k.n * k.k;
                k.bytes = 2.0 * (double(k.m) * k.k + double(k.k) * k.n + double(k.m) * k.n);
            } else if (o.kind == OpKind::attention || o.name.rfind("core.", 0) == 0) {
                if (o.name.find("softmax") != std::string::npos || o.name.find(".bwd") != std::string::npos) continue;
                k.kind = "attention";
                const long heads = m.heads / p.tp, seq = m.seq_len / p.cp;
                const double full = 4.0 * double(p.micro_batch) * heads * seq * seq * m.head_dim;
                k.shrink = std::clamp(cap_s * flops_per_s / full, 1.0 / (p.micro_batch * heads), 1.0);
                k.m = std::max(1L, static_cast<long>(p.micro_batch * heads * k.shrink));  // batch x heads kept
                k.n = seq, k.k = m.head_dim;
                k.flops = 4.0 * k.m * k.n * k.n * k.k;
                k.bytes = 4.0 * (4.0 * k.m * k.n * k.k + double(k.m) * k.n * k.n);
            } else {
                // Elementwise kernels run on the op's own logical size (tokens x its width), tokens shrunk.
                k.kind = "elementwise";
                k.shrink = std::clamp(cap_s * bytes_per_s / std::max(1.0, o.bytes), std::min(1.0, 64.0 / tokens),
                                      1.0);
                k.elements = std::max(1L, static_cast<long>(tokens * k.shrink));  // tokens measured
                k.bytes = o.bytes * k.shrink;
            }
            k.plan_flops = o.flops, k.plan_bytes = o.bytes;
            k.plan_min_dim = std::min({o.m, o.n, o.k});
            if (k.kind == "attention") {
                k.op = "attention";  // one kernel: QK^T, causal softmax, PV (the forward of core.qk + softmax + core.pv)
                k.plan_flops = 4.0 * double(p.micro_batch) * (m.heads / p.tp) * (double(m.seq_len) / p.cp) * m.seq_len *
                               m.head_dim;
            }
            const std::string key = k.kind + fmt::format(":{}:{}:{}:{}:{}", k.m, k.n, k.k, k.elements, k.op);
            if (seen[key]) continue;
            seen[key] = true;
            plan.push_back(k);
        }
    }

    Json ms = Json::array();
    for (const auto& k : plan) {
        calib::Timing t;
        if (cuda) {
            // cuBLAS bf16 GEMMs, batched attention with a causal softmax kernel, CUDA elementwise kernels (SwiGLU
            // and cross-entropy are timed as GeLU and streaming passes of the same size).
            const long rows = k.elements * (k.pass == "backward" ? 2 : 1);
            const long h = m.hidden, fw = m.ffn_hidden / p.tp, v = m.vocab / p.tp;
            if (k.kind == "matmul") t = calib::gpu::gemm(k.m, k.n, k.k, per_kernel_s);
            else if (k.kind == "attention") t = calib::gpu::attention(k.m, k.n, k.k, per_kernel_s);
            else if (k.op.find("norm") != std::string::npos) t = calib::gpu::layernorm(rows, h, per_kernel_s);
            else if (k.op.find("mlp.act") != std::string::npos)
                t = calib::gpu::gelu(rows * fw * (m.gated() ? 2 : 1), per_kernel_s);
            else if (k.op.rfind("cross_entropy", 0) == 0) t = calib::gpu::stream_add(rows * v, per_kernel_s);
            else t = calib::gpu::stream_add(rows * h, per_kernel_s);
        } else if (k.kind == "matmul") t = calib::gemm(k.m, k.n, k.k, per_kernel_s);
        else if (k.kind == "attention") t = calib::attention(k.m, k.n, k.k, true, per_kernel_s);
        else {
            // The op's kernel at its logical size: `tokens` rows of its width; backward passes read and write about
            // twice as much, so they run the forward kernel on twice the rows.
            const long rows = k.elements * (k.pass == "backward" ? 2 : 1);
            const long h = m.hidden, fw = m.ffn_hidden / p.tp, v = m.vocab / p.tp;
            if (k.op.find("norm") != std::string::npos) t = calib::layernorm(rows, h, per_kernel_s);
            else if (k.op.find("mlp.act") != std::string::npos)
                t = m.gated() ? calib::swiglu(rows * fw, per_kernel_s) : calib::gelu(rows * fw, per_kernel_s);
            else if (k.op == "cross_entropy") t = calib::cross_entropy(k.elements, v, per_kernel_s);
            else if (k.op == "cross_entropy.bwd") t = calib::stream_add(k.elements * v, per_kernel_s);
            else if (k.op == "embedding.lookup") t = calib::embedding(k.elements, h, m.vocab, per_kernel_s);
            else t = calib::stream_add(rows * h, per_kernel_s);  // residual adds, embedding gradient, rope
        }
        Json shape = k.kind == "elementwise" ? Json{{"tokens", k.elements}} : Json{{"m", k.m}, {"n", k.n}, {"k", k.k}};
        ms.push_back({{"op", k.op}, {"pass", k.pass}, {"kind", k.kind}, {"shape", shape},
                      {"token_shrink", k.shrink}, {"flops", k.flops}, {"bytes", k.bytes},
                      {"plan_flops", k.plan_flops}, {"plan_bytes", k.plan_bytes}, {"plan_min_dim", k.plan_min_dim},
                      {"median_s", t.median_s}, {"min_s", t.min_s}, {"max_s", t.max_s}, {"reps", t.reps},
                      {"spread_pct", t.spread_pct()},
                      {"flops_per_s", t.median_s > 0 ? k.flops / t.median_s : 0.0},
                      {"bytes_per_s", t.median_s > 0 ? k.bytes / t.median_s : 0.0}});
        table += fmt::format("{:<28} {:<9} {:<11} {:>22} {:>9.3f} {:>10.1f} {:>8.1f}\n", k.op, k.pass, k.kind,
                             k.kind == "elementwise" ? fmt::format("{}", k.elements)
                                                     : fmt::format("{}x{}x{}", k.m, k.n, k.k),
                             t.median_s * 1e3, t.median_s > 0 ? k.flops / t.median_s / 1e9 : 0.0, t.spread_pct());
    }
    // AdamW over this device's parameter shard (shrunk like the rest).
    const double shard = m.params_per_layer() / p.tp;
    const long params = static_cast<long>(std::clamp(per_kernel_s / 5 * kAssumedCpuBytesPerS / 28, 1e5, shard));
    const auto ta = cuda ? calib::gpu::adamw(params, per_kernel_s) : calib::adamw(params, per_kernel_s);
    ms.push_back({{"op", "adamw"}, {"pass", "optimizer"}, {"kind", "optimizer"}, {"shape", {{"params", params}}},
                  {"bytes", params * 28.0}, {"token_shrink", 1.0}, {"plan_bytes", params * 28.0}, {"median_s", ta.median_s}, {"min_s", ta.min_s}, {"max_s", ta.max_s},
                  {"reps", ta.reps}, {"spread_pct", ta.spread_pct()},
                  {"bytes_per_s", ta.median_s > 0 ? params * 28.0 / ta.median_s : 0.0}});

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
