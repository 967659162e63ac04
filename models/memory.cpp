#include "models/memory.hpp"

#include <algorithm>

#include "models/layer_ops.hpp"
#include "models/step_parts.hpp"

namespace podsim {

namespace {

// The bytes of a layer's named tensors (per micro-batch) that `mask` keeps: the layer input, Q/K/V, the attention
// output with its fp32 log-sum-exp per head (MaxText names that residual "context" too), the projection's output, the
// MLP's up halves, the experts' (for the tokens the busiest rank computes; their down output after the expert-TP
// reduce-scatter), all 16-bit. A name JAX finds no residual for is not kept whatever the policy says: a dense MLP's
// down output (it only feeds the next layer's input) and in a parallel block the attention projection's.
double named_tensor_bytes(const ModelSpec& m, const ParallelPlan& p, bool moe, unsigned mask) {
    const double t = p.tp, T = double(p.micro_batch) * m.seq_len / p.cp, Tn = p.sp ? T / t : T;
    const double h = m.hidden, f = m.ffn_hidden / t, heads = m.heads / t;
    const double kv_heads = std::max(1.0, m.kv_heads / t);
    auto has = [&](RematTensor x) { return (mask >> unsigned(x)) & 1u; };
    const double gate = m.gated() ? 1 : 0;
    double fw = f;  // a dense MLP's, or the shared experts', up width per matrix
    if (moe) fw = m.moe.shared_experts * double(m.moe.expert_ffn_hidden) / t;
    double b = 0;
    b += has(RematTensor::layer_input) * 2 * Tn * h;
    b += has(RematTensor::query) * 2 * T * heads * m.qk_head_dim();
    b += has(RematTensor::key) * 2 * T * kv_heads * m.qk_head_dim();
    b += has(RematTensor::value) * 2 * T * kv_heads * m.v_dim();
    b += has(RematTensor::context) * T * heads * (2 * m.v_dim() + 4);
    b += has(RematTensor::out_proj) * (m.parallel_block ? 0 : 2 * Tn * h);
    b += has(RematTensor::mlp_wi_0) * 2 * T * fw + has(RematTensor::mlp_wi_1) * gate * 2 * T * fw;
    if (moe) {
        const MoeLoad load = moe_load(m, p);
        const double fe = double(m.moe.expert_ffn_hidden) / p.expert_tp();
        b += has(RematTensor::moe_wi_0) * 2 * load.tokens * fe + has(RematTensor::moe_wi_1) * gate * 2 * load.tokens * fe;
        b += has(RematTensor::moe_wo) * 2 * load.tokens * h / p.expert_tp();
    }
    return b;
}

}  // namespace

double layer_activation_bytes(const ModelSpec& m, const ParallelPlan& p, bool moe) {
    const double t = p.tp, T = double(p.micro_batch) * m.seq_len / p.cp;
    const double h = m.hidden, f = m.ffn_hidden / t;
    const double heads = m.heads / t;
    const double q = heads * m.qk_head_dim(), kv = std::max(1.0, m.kv_heads / t) * (m.qk_head_dim() + m.v_dim()) / 2;
    const double mask = m.dropout ? 1 : 0;
    if (p.recompute == Recompute::full) return 2 * T * h / (p.sp ? t : 1);  // only the layer input
    if (p.per_op_selective())
        return alternate_selective_saved_bytes(m, p, moe);
    if (p.recompute == Recompute::names) return named_tensor_bytes(m, p, moe, p.remat.device);
    // The MLP's saved tensors per token position: a dense MLP's up output(s) and activation output; an MoE
    // layer's router probabilities, the permuted tokens, each local expert's up and activation outputs for the
    // tokens it computes (the busiest rank), and the shared experts'.
    // Bytes of a saved linear-layer input: its fp8 copy where the stack keeps that for the weight-gradient GEMM
    // (Transformer Engine), else 16 bits. Only tensors whose sole use in the backward is a GEMM's input shrink: the
    // norms' outputs and the activation's output; the attention output stays 16-bit for the attention's backward,
    // so there the fp8 copy comes on top.
    const bool fp8_inputs = p.fp8_saved_inputs && p.precision == Precision::fp8;
    const double in_b = fp8_inputs ? 1 : 2;
    const double act_out = p.act_fused_into_gemm ? 0 : 1;  // the activation's output, unless fused into the GEMM
    double mlp_saved = T * ((m.gated() ? 2 : 1) * f * 2 + act_out * f * in_b);
    double up_out = (m.gated() ? 2 : 1) * f;
    if (moe) {
        const MoeLoad load = moe_load(m, p);
        const double fe = double(m.moe.expert_ffn_hidden) / p.expert_tp(), fs = m.moe.shared_experts * double(m.moe.expert_ffn_hidden) / t;
        mlp_saved = 4 * T * m.moe.experts + 2 * load.tokens * h +
                    load.tokens * ((m.gated() ? 2 : 1) * fe * 2 + act_out * fe * in_b) +
                    T * ((m.gated() ? 2 : 1) * fs * 2 + act_out * fs * in_b);
        up_out = (load.tokens * (m.gated() ? 2 : 1) * fe + T * (m.gated() ? 2 : 1) * fs) / T;
    }
    // Minimal (JAX checkpoint_dots policies): the layer input and the weight-GEMM outputs the backward uses: Q/K/V
    // (attention's backward), the projection's (the second norm's input is the residual plus it) and the MLP's up
    // output(s). The down projection's output is not a residual of the backward (it only feeds the next layer's
    // input, saved as that layer's input), so the autodiff keeps none of it.
    if (p.recompute == Recompute::minimal)
        return 2 * T * h / (p.sp ? t : 1) + 2 * T * (q + 2 * kv + up_out) + 2 * T * h / (p.sp ? t : 1);
    // Tensors of width h, replicated across TP unless sequence parallel: norm inputs, GEMM inputs, dropout masks.
    // (Each norm: its 16-bit input and its output, the next GEMM's input.)
    const double replicated = T * h * ((m.parallel_block ? 2 + in_b : 2 + in_b + 2 + in_b) + 2 * mask) / (p.sp ? t : 1);
    // TP-sharded: Q, K, V, attention output (projection input), and the MLP's saved tensors.
    const double o_in = heads * m.v_dim();
    const double o_b = !fp8_inputs ? 2 : p.attention != AttentionKernel::standard ? 2 + 1 : 1;
    const double sharded = T * (2 * (q + 2 * kv) + o_b * o_in) + mlp_saved;
    double core = 0;
    if (p.attention == AttentionKernel::standard && p.recompute != Recompute::selective)
        core = double(p.micro_batch) * heads * (double(m.seq_len) / p.cp) * m.seq_len * (2 + mask + 2 * mask);
    return replicated + sharded + core;
}

MemoryBreakdown memory_per_device(const ModelSpec& m, const ParallelPlan& p, const ChipSpec& chip,
                                  const MemoryInputs& in) {
    MemoryBreakdown r;
    // Parameters held on this device: the dense part split by TP, routed experts split by EP x expert-TP; ZeRO
    // shards the first over data parallelism, the second over expert data parallelism.
    const double dense = (in.stage_params - in.expert_params) / p.tp, experts = in.expert_params / (p.ep * p.expert_tp());
    const double params = dense + experts;
    const double z = in.zero_shard, ez = in.expert_zero_shard;
    auto sharded = [&](bool on) { return on ? dense / z + experts / ez : params; };
    const double layer_params = fsdp_layer_params_per_device(m, p);
    // A 16-bit compute copy of the weights, unless the framework keeps only the fp32 master and casts on use
    // (XLA/MaxText: weights gathered in fp32); FSDP holds a shard plus two gathered layers (prefetch).
    const double copy = p.compute_weight_copy ? 2 : 0;
    r.weights_bytes = p.zero >= 3 ? copy * sharded(true) + 2 * p.param_gather_bytes * layer_params : copy * params;
    r.master_bytes = p.master_weight_bytes * sharded(p.zero >= 1);
    r.gradients_bytes = p.grad_reduce_bytes * sharded(p.zero >= 2);
    r.optimizer_bytes = p.optimizer_state_bytes * sharded(p.zero >= 1);
    const bool alternate = p.per_op_selective();
    const double per_layer = alternate && in.alternate_saved_bytes >= 0 ? in.alternate_saved_bytes
                                                                         : layer_activation_bytes(m, p);
    const double per_moe_layer = in.moe_layers == 0                               ? 0
                                 : alternate && in.alternate_saved_moe_bytes >= 0 ? in.alternate_saved_moe_bytes
                                                                                  : layer_activation_bytes(m, p, true);
    const int off_moe = in.offload_moe_layers, off_dense = in.offload_layers - off_moe;
    r.activations_bytes = (per_layer * (in.layers_on_stage - in.moe_layers - off_dense) +
                           per_moe_layer * (in.moe_layers - off_moe)) *
                          in.in_flight_microbatches;
    if (in.offload_layers > 0) {
        // Offloaded layers' sets live in host memory; one stays on the device as the buffer the copy engine moves
        // from (forward) and into (backward, prefetched a layer ahead: Transformer Engine's offload handler).
        r.host_offload_bytes = (per_layer * off_dense + per_moe_layer * off_moe) * in.in_flight_microbatches;
        r.activations_bytes += off_moe > 0 ? per_moe_layer : per_layer;
    }
    if (p.recompute == Recompute::names && p.remat.offload) {
        // Offloaded named tensors live in pinned host memory; the DMA engines copy them out during the forward and
        // back ahead of the layer's backward, under the compute (XLA's host offload): their time is not priced.
        r.host_offload_bytes += (named_tensor_bytes(m, p, false, p.remat.offload) * (in.layers_on_stage - in.moe_layers) +
                                 named_tensor_bytes(m, p, true, p.remat.offload) * in.moe_layers) *
                                in.in_flight_microbatches;
    }
    r.host_bytes = in.host_bytes_per_device;
    const double T = double(p.micro_batch) * m.seq_len / p.cp;
    // Transients live in different phases of the step, so the peak holds the largest, not their sum: the loss
    // phase (logits in 16 bits and their fp32 softmax/gradient buffer for one micro-batch, freed once the output
    // layer's backward has consumed them) and a layer's backward (its recomputed activations under full
    // recomputation, and under context parallelism by all-gather the whole sequence's K and V).
    // Where XLA fuses elementwise producers into a GEMM's operands (act_fused_into_gemm: TPU), the loss's fp32
    // softmax and its gradient are computed inside the output layer's backward GEMMs from the 16-bit logits and the
    // per-token log-sum-exp, so only the logits are held.
    const double logit_bytes = p.act_fused_into_gemm ? 2 : 2 + 4;
    const double loss_phase = in.last_stage ? T * double(m.vocab) / p.tp * logit_bytes : 0;
    double layer_phase = 0;
    const bool named = p.recompute == Recompute::names;
    if (p.recompute == Recompute::full || alternate || named) {
        // The layer being back-propagated holds what its recomputation rebuilt: everything a layer saves without
        // recomputation, less what the policy kept on the device (offloaded tensors come back for it).
        ParallelPlan none = p;
        none.recompute = Recompute::none;
        const bool moe = in.moe_layers > 0;
        layer_phase += std::max(0.0, layer_activation_bytes(m, none, moe) -
                                         (alternate || named ? (moe ? per_moe_layer : per_layer) : 0));
    }
    if (p.cp > 1 && p.cp_algorithm == ParallelPlan::CpAlgorithm::all_gather)
        layer_phase += 2 * double(p.micro_batch) * m.seq_len * std::max(1.0, double(m.kv_heads) / p.tp) *
                       (m.qk_head_dim() + m.v_dim());
    r.transient_bytes = std::max(loss_phase, layer_phase);
    // A stated reserve. GPUs: the caching allocator's fragmentation, cuBLAS workspaces and NCCL buffers, which grow
    // with the device (5%, at least 1 GiB). TPUs: XLA assigns every buffer at compile time (no allocator
    // fragmentation); what remains is the runtime's program and collective scratch, a fixed 0.5 GiB.
    r.workspace_bytes = chip.kind == ChipKind::tpu ? 0.5 * (1ull << 30) : std::max(1.0 * (1ull << 30), 0.05 * chip.hbm_bytes);
    r.total_bytes = r.weights_bytes + r.master_bytes + r.gradients_bytes + r.optimizer_bytes + r.activations_bytes +
                    r.transient_bytes + r.workspace_bytes;
    r.hbm_bytes = chip.hbm_bytes;
    // A system without a stated host memory (the TPU catalog's) leaves a named policy's offload unchecked; layer
    // offload needs one (check_split).
    const bool host_unknown = named && r.host_bytes <= 0;
    r.fits = r.total_bytes <= r.hbm_bytes && (r.host_offload_bytes <= r.host_bytes || host_unknown);
    return r;
}

}  // namespace podsim
