#include "models/memory.hpp"

#include <algorithm>

namespace podsim {

double layer_activation_bytes(const ModelSpec& m, const ParallelPlan& p) {
    const double t = p.tp, T = double(p.micro_batch) * m.seq_len / p.cp;
    const double h = m.hidden, f = m.ffn_hidden / t;
    const double heads = m.heads / t, hd = m.head_dim;
    const double q = heads * hd, kv = std::max(1.0, m.kv_heads / t) * hd;
    const double mask = m.dropout ? 1 : 0;
    if (p.recompute == Recompute::full) return 2 * T * h / (p.sp ? t : 1);  // only the layer input
    const double up_out = (m.gated() ? 2 : 1) * f;
    if (p.recompute == Recompute::minimal)  // layer input + outputs of the weight GEMMs (qkv, proj, up, down)
        return 2 * T * h / (p.sp ? t : 1) + 2 * T * (q + 2 * kv + up_out) + 2 * 2 * T * h / (p.sp ? t : 1);
    // Tensors of width h, replicated across TP unless sequence parallel: norm inputs, GEMM inputs, dropout masks.
    const double replicated = T * h * ((m.parallel_block ? 2 + 2 : 2 + 2 + 2 + 2) + 2 * mask) / (p.sp ? t : 1);
    // TP-sharded: Q, K, V, attention output (projection input), MLP up output(s) and activation output.
    const double up = (m.gated() ? 2 : 1) * f;
    const double sharded = T * (2 * (q + 2 * kv) + 2 * q + 2 * up + 2 * f);
    double core = 0;
    if (p.attention == AttentionKernel::standard && p.recompute != Recompute::selective)
        core = double(p.micro_batch) * heads * (double(m.seq_len) / p.cp) * m.seq_len * (2 + mask + 2 * mask);
    return replicated + sharded + core;
}

MemoryBreakdown memory_per_device(const ModelSpec& m, const ParallelPlan& p, const ChipSpec& chip,
                                  const MemoryInputs& in) {
    MemoryBreakdown r;
    const double params = in.stage_params / p.tp;
    const double z = in.zero_shard;
    const double layer_params = m.params_per_layer() / p.tp;
    // A 16-bit compute copy of the weights, unless the framework keeps only the fp32 master and casts on use
    // (XLA/MaxText: weights gathered in fp32); FSDP holds a shard plus two gathered layers (prefetch).
    const double copy = p.compute_weight_copy ? 2 : 0;
    r.weights_bytes = p.zero >= 3 ? copy * params / z + 2 * p.param_gather_bytes * layer_params : copy * params;
    r.master_bytes = p.master_weight_bytes * params / (p.zero >= 1 ? z : 1);
    r.gradients_bytes = p.grad_reduce_bytes * params / (p.zero >= 2 ? z : 1);
    r.optimizer_bytes = 8 * params / (p.zero >= 1 ? z : 1);
    const double per_layer = layer_activation_bytes(m, p);
    r.activations_bytes = per_layer * in.layers_on_stage * in.in_flight_microbatches;
    const double T = double(p.micro_batch) * m.seq_len / p.cp;
    // Logits in 16 bits and their fp32 softmax/gradient buffer for one micro-batch.
    if (in.last_stage) r.transient_bytes += T * double(m.vocab) / p.tp * (2 + 4);
    if (p.recompute == Recompute::full) {
        ParallelPlan none = p;
        none.recompute = Recompute::none;
        r.transient_bytes += layer_activation_bytes(m, none);
    }
    // Allocator fragmentation, cuBLAS/XLA workspaces and communication buffers: a stated reserve.
    r.workspace_bytes = std::max(1.0 * (1ull << 30), 0.05 * chip.hbm_bytes);
    r.total_bytes = r.weights_bytes + r.master_bytes + r.gradients_bytes + r.optimizer_bytes + r.activations_bytes +
                    r.transient_bytes + r.workspace_bytes;
    r.hbm_bytes = chip.hbm_bytes;
    r.fits = r.total_bytes <= r.hbm_bytes;
    return r;
}

}  // namespace podsim
