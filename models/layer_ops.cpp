#include "models/layer_ops.hpp"

#include <algorithm>
#include <initializer_list>
#include <iterator>

#include "models/quantize_ops.hpp"

namespace podsim {

const char* to_string(OpKind k) {
    switch (k) {
        case OpKind::matmul: return "matmul";
        case OpKind::attention: return "attention";
        case OpKind::elementwise: return "elementwise";
        case OpKind::collective: return "collective";
    }
    return "?";
}

const char* to_string(CommGroup g) {
    switch (g) {
        case CommGroup::tp: return "tp";
        case CommGroup::cp: return "cp";
        case CommGroup::fsdp: return "fsdp";
        case CommGroup::ep: return "ep";
        case CommGroup::etp: return "etp";
    }
    return "?";
}

const char* to_string(CommKind k) {
    switch (k) {
        case CommKind::all_reduce: return "all-reduce";
        case CommKind::reduce_scatter: return "reduce-scatter";
        case CommKind::all_gather: return "all-gather";
        case CommKind::send_recv: return "send-recv";
        case CommKind::all_to_all: return "all-to-all";
    }
    return "?";
}

const char* to_string(NumFormat f) {
    switch (f) {
        case NumFormat::b16: return "b16";
        case NumFormat::fp8: return "fp8";
        case NumFormat::int8: return "int8";
        case NumFormat::fp4: return "fp4";
    }
    return "?";
}

namespace {

constexpr double kAct = 2;  // bytes per activation element (bf16/fp16)

// A GEMM whose operands are in `fmt` (`el` bytes an element, scales included); its output is 16-bit.
Op matmul(std::string name, double M, double N, double K, NumFormat fmt = NumFormat::b16, double el = kAct) {
    Op o;
    o.name = std::move(name);
    o.kind = OpKind::matmul;
    o.m = M, o.n = N, o.k = K;
    o.flops = 2 * M * N * K;
    o.bytes = el * (M * K + K * N) + kAct * M * N;
    o.format = fmt;
    return o;
}

Op elementwise(std::string name, double bytes, int kernels = 1) {
    Op o;
    o.name = std::move(name);
    o.kind = OpKind::elementwise;
    o.bytes = bytes;
    o.kernels = kernels;
    return o;
}

// A normalization: Transformer Engine's LayerNormLinear lets it write the next GEMM's low-precision input itself.
Op norm(std::string name, double bytes) {
    Op o = elementwise(std::move(name), bytes);
    o.norm = true;
    return o;
}

Op collective(std::string name, CommGroup g, CommKind c, double bytes, bool overlappable) {
    Op o;
    o.name = std::move(name);
    o.kind = OpKind::collective;
    o.group = g;
    o.comm = c;
    o.comm_bytes = bytes;
    o.overlappable = overlappable;
    o.kernels = 0;
    return o;
}

// Backward of a GEMM: input gradient (M x K from M x N . N x K) and weight gradient (K x N from K x M . M x N),
// each in the format the plan runs that pass of a low-precision linear layer in (quantize_ops.hpp).
void backward_of(const Op& f, std::vector<Op>& out, const ParallelPlan& p) {
    // A grouped GEMM (experts) carries its batch in flops and bytes, with M the per-group size: scale alike.
    const double batch = f.flops / (2 * f.m * f.n * f.k);
    const bool low = f.format != NumFormat::b16;
    const NumFormat df = low ? gemm_format(p, OpPass::backward_data) : NumFormat::b16;
    const NumFormat wf = low ? gemm_format(p, OpPass::backward_weight) : NumFormat::b16;
    Op dgrad = matmul(f.name + ".dgrad", f.m, f.k, f.n, df, operand_bytes(df, p));
    Op wgrad = matmul(f.name + ".wgrad", f.k, f.n, f.m, wf, operand_bytes(wf, p));
    // The input gradient carries the backward's TP collective the same way (its reduce-scatter or all-gather in
    // pieces); the weight gradient does not (its overlap is a bulk one, under the whole GEMM).
    dgrad.chunks = f.chunks;
    dgrad.flops *= batch, dgrad.bytes *= batch, wgrad.flops *= batch, wgrad.bytes *= batch;
    dgrad.pass = OpPass::backward_data, wgrad.pass = OpPass::backward_weight;
    for (Op* d : {&dgrad, &wgrad}) {
        d->groups = f.groups, d->group_rows = f.group_rows;
        std::copy(std::begin(f.group_row_tiles), std::end(f.group_row_tiles), std::begin(d->group_row_tiles));
    }
    out.push_back(dgrad);
    out.push_back(wgrad);
}

// TorchTitan's selective rule over the weight matrices a GEMM fuses (Op::matrix_shares), continuing the layer's count:
// the shares of its N recomputed (even-numbered matrices) and saved (odd-numbered).
struct AlternateSplit {
    double recomputed = 0, saved = 0;
};
AlternateSplit alternate_split(const Op& o, int& matrix) {
    AlternateSplit r;
    for (double part : o.matrix_shares)
        if (part > 0) (++matrix % 2 == 0 ? r.recomputed : r.saved) += part;
    return r;
}

// The same policy for the ops that are not weight GEMMs: what the backward finds saved. The fused attention kernel's
// output (SDPA is in the save list; the math path's bmm and softmax are not), the reduce-scatters, and the expert
// all-to-alls (TorchTitan's later MoE policy saves all_to_all_single); the context-parallel K/V exchange (ring or
// all-gather) only feeds the attention kernel, whose output is kept, so it does not run again either. Everything
// else is recomputed.
enum class AlternateFate { recomputed, saved, not_rerun };
// Ring context parallelism's merge of the per-step partial outputs: the last part of the attention's output, so a
// policy that keeps that output does not run it again either.
constexpr const char* kCpOutMerge = "cp.out_merge";
bool is_cp_out_merge(const Op& o) { return o.name == kCpOutMerge; }
AlternateFate alternate_fate(const Op& o, const ParallelPlan& p) {
    if (in_attention_core(o) || is_cp_out_merge(o))
        return p.attention == AttentionKernel::standard ? AlternateFate::recomputed : AlternateFate::saved;
    if (o.kind != OpKind::collective) return AlternateFate::recomputed;
    if (o.comm == CommKind::reduce_scatter || o.comm == CommKind::all_to_all) return AlternateFate::saved;
    if (o.group == CommGroup::cp) return AlternateFate::not_rerun;
    return AlternateFate::recomputed;
}

// The share of a GEMM that runs again, when only some of the matrices it fuses (Op::matrix_shares) are recomputed.
Op share_of(Op o, double share) {
    o.n *= share, o.flops *= share, o.bytes *= share;
    return o;
}

// Recomputation by named tensors (Recompute::names) as JAX's autodiff runs it: the backward needs the Q/K/V
// projections (the attention's backward), the attention output (the projection's weight gradient and the attention's
// backward), the projection's output (the second norm's input is the residual plus it), the MLP's up outputs (the
// activation's backward), the router's scores and the experts' combined outputs (the routing weights' gradient, which
// MaxText applies after the return all-to-all); not a dense MLP's down projection's output, which only feeds the next
// layer's input (kept as that layer's), nor in a parallel block the attention projection's. What the policy does not
// keep of these runs again from the layer input; so do the elementwise ops between the GEMMs, the inputs the weight
// gradients need that no policy names (the sequence-parallel gathers of the norms' outputs, MLA's latents, the tokens
// dispatched to the experts), and the collectives that feed a rerun GEMM (jax.checkpoint; MaxText decoders.py, moe.py,
// attention_mla.py).
void named_recompute(const std::vector<Op>& F, const ModelSpec& m, const ParallelPlan& p, std::vector<Op>& out) {
    const RematNames& r = p.remat;
    auto unkept = [&](RematTensor t) { return r.kept(t) ? 0.0 : 1.0; };
    // The share of a GEMM that fuses several named matrices (Op::matrix_shares) whose outputs are not kept.
    auto share = [&](const Op& o, std::initializer_list<RematTensor> named) {
        double s = 0;
        int k = 0;
        for (RematTensor t : named) s += o.matrix_shares[k++] * unkept(t);
        return s;
    };
    const bool core = !r.kept(RematTensor::context);
    const bool proj = !m.parallel_block && !r.kept(RematTensor::out_proj);
    const bool kv_kept = r.kept(RematTensor::key) && r.kept(RematTensor::value);
    for (const auto& o : F) {
        double part = 0;  // the share of the op that runs again
        if (in_attention_core(o)) {
            // Standard attention keeping its output still needs the softmax's (the scores' gradient).
            part = core || o.role == OpRole::attention_softmax || o.name == "core.qk";
        } else if (is_cp_out_merge(o)) {
            part = core;
        } else if (o.kind == OpKind::matmul) {
            if (o.name == "qkv") part = share(o, {RematTensor::query, RematTensor::key, RematTensor::value});
            else if (o.name == "mla.q_down" || o.name == "mla.kv_down") part = 1;  // the latents: up GEMMs' inputs
            else if (o.name == "mla.q_up" || o.name == "mla.q") part = unkept(RematTensor::query);
            else if (o.name == "mla.kv_up") part = kv_kept ? 0 : 1;
            else if (o.name == "attn.proj") part = proj;
            else if (o.name == "mlp.up" || o.name == "moe.shared.up")
                part = share(o, {RematTensor::mlp_wi_0, RematTensor::mlp_wi_1});
            else if (o.name == "moe.router") part = 1;
            else if (o.name == "moe.experts.up") part = share(o, {RematTensor::moe_wi_0, RematTensor::moe_wi_1});
            else if (o.name == "moe.experts.down") part = unkept(RematTensor::moe_wo);
        } else if (o.kind == OpKind::collective) {
            if (o.group == CommGroup::cp) part = core;
            else if (o.name == "tp.reduce.attn" || o.name == "tp.reduce.block") part = proj;
            else if (o.name == "sp.all_gather.attn" || o.name == "sp.all_gather.mlp") part = 1;
            else if (o.name == "ep.dispatch" || o.name == "etp.all_gather") part = 1;
            else if (o.name == "ep.combine" || o.name == "etp.reduce_scatter") part = 1;
        } else {
            part = o.name == "residual_dropout2" ? 0 : 1;
        }
        if (part > 0) out.push_back(share_of(o, part));
    }
}

}  // namespace

double alternate_selective_saved_bytes(const ModelSpec& m, const ParallelPlan& p, bool moe) {
    const LayerOps L = layer_ops(m, p, moe);
    const double t = p.tp, T = double(p.micro_batch) * m.seq_len / p.cp, Tn = p.sp ? T / t : T;
    // The layer's input (the checkpoint's), the fused attention kernel's output and its fp32 log-sum-exp per head,
    // each reduce-scatter's output (its buffer over the group), each all-to-all's received tokens, and the
    // odd-numbered weight matrices' outputs.
    double bytes = kAct * Tn * m.hidden;
    if (p.attention != AttentionKernel::standard) bytes += T * (m.heads / t) * (kAct * m.v_dim() + 4);
    int matrix = 0;
    for (const auto& o : L.forward) {
        if (o.kind == OpKind::collective && alternate_fate(o, p) == AlternateFate::saved)
            bytes += o.comm == CommKind::reduce_scatter
                         ? o.comm_bytes / (o.group == CommGroup::etp ? p.expert_tp() : o.group == CommGroup::tp ? p.tp : 1)
                         : o.comm_bytes;
        if (o.kind != OpKind::matmul || in_attention_core(o)) continue;
        const double rows = o.flops / (2 * o.n * o.k);  // a grouped GEMM's tokens are in its FLOPs
        bytes += kAct * rows * o.n * alternate_split(o, matrix).saved;
    }
    return bytes;
}

double total_flops(const std::vector<Op>& ops) {
    double f = 0;
    for (const auto& o : ops) f += o.flops;
    return f;
}

MoeLoad moe_load(const ModelSpec& m, const ParallelPlan& p) {
    MoeLoad l;
    if (!m.moe.enabled()) return l;
    // Each TP rank dispatches its 1/tp of the micro-batch's tokens (Megatron-core's all-to-all dispatcher); with
    // expert TP the etp ranks of an expert compute the tokens of all of them.
    const double T = double(p.micro_batch) * m.seq_len / p.cp / p.tp;
    const double etp = p.expert_tp();
    double skew = m.moe.load_imbalance;
    if (m.moe.capacity_factor > 0 && skew > m.moe.capacity_factor) {
        // The busiest expert keeps capacity; the excess of a skew-s expert, (s - cf) / s of its tokens, is dropped.
        l.dropped_fraction = (skew - m.moe.capacity_factor) / skew / p.ep;  // one hot rank of ep, as a share of all
        skew = m.moe.capacity_factor;
    }
    l.tokens = T * m.moe.top_k * skew * etp;
    l.per_expert = l.tokens / (double(m.moe.experts) / p.ep);
    return l;
}

LayerOps layer_ops(const ModelSpec& m, const ParallelPlan& p, bool moe) {
    const double t = p.tp, b = p.micro_batch, s = m.seq_len;
    const double T = b * s / p.cp;                 // tokens this device computes
    const double Tn = p.sp ? T / t : T;            // tokens of norms/dropouts (sequence parallel shards them)
    const double h = m.hidden, f = m.ffn_hidden / t;
    const double heads = m.heads / t;
    const double kv_heads = std::max(1.0, m.kv_heads / t);  // fewer KV heads than TP ranks: replicated
    const double qd = double(m.qk_head_dim()), vd = double(m.v_dim());  // = head_dim unless MLA
    const double q = heads * qd, kvk = kv_heads * qd, kvv = kv_heads * vd, o_in = heads * vd;
    // The linear layers' GEMMs run in the plan's low-precision format where it has one (quantize_ops.hpp adds the
    // casts of their operands); embedding, logits, router and the attention core stay 16-bit.
    const NumFormat lp = gemm_format(p, OpPass::forward);
    const double lp_bytes = operand_bytes(lp, p);
    auto linear = [&](std::string name, double M, double N, double K) {
        return matmul(std::move(name), M, N, K, lp, lp_bytes);
    };
    const double act_bytes_per_token_h = Tn * h * kAct;
    const double mask = m.dropout ? 1 : 0;  // dropout mask bytes per element
    LayerOps L;
    auto& F = L.forward;
    // Full TP overlap splits each GEMM that meets a TP collective (the all-gather before QKV and the MLP's up, the
    // reduce-scatter or all-reduce after the projection and the MLP's down) into one piece per TP rank.
    const int tp_chunks = t > 1 && p.tp_comm_overlap == TpOverlap::full ? t : 1;
    auto chunked = [&](Op o) {
        o.chunks = tp_chunks;
        return o;
    };
    // Eager PyTorch (no torch.compile) runs each elementwise step of the model code as its own kernel and HBM pass
    // (TorchTitan at 9dec370, the PyTorch of Hugging Face models): RMSNorm as float(), pow, mean, x * rsqrt,
    // type_as and * weight reads and writes 36 bytes per element over 7 kernels where a fused kernel moves 4
    // (models/norms.py); RoPE as float(), a complex multiply and type_as moves 20 per element over 3 kernels per
    // tensor where a fused one moves 4 (apply_rotary_emb); SwiGLU as silu(gate) then * up moves 10 per output
    // element over 2 kernels where a fused one moves 6. LayerNorm (one ATen kernel), GELU and the residual adds
    // cost the same either way; the backward mirrors its forward op (2x its passes, below).
    auto eager = [&](Op o, double fused_bytes_per_elem, double eager_bytes_per_elem, int kernels) {
        if (p.eager_elementwise) o.bytes *= eager_bytes_per_elem / fused_bytes_per_elem, o.kernels = kernels;
        return o;
    };
    auto rms_or_layer_norm = [&](const char* name, double bytes) {
        const Op o = norm(name, bytes);
        return m.norm == Norm::rmsnorm ? eager(o, 4, 36, 7) : o;
    };
    auto gated_halves = [&](Op o) {  // a gated MLP's up GEMM holds the gate and the up matrix
        if (m.gated()) o.matrix_shares[0] = o.matrix_shares[1] = 0.5;
        return o;
    };

    // --- attention block -------------------------------------------------------------------------------------
    auto tp_gather = [&](const char* name, std::vector<Op>& v) {
        if (t > 1 && p.sp)
            v.push_back(collective(name, CommGroup::tp, CommKind::all_gather, T * h * kAct,
                                   p.tp_comm_overlap == TpOverlap::full));
    };
    auto tp_reduce = [&](const char* name, std::vector<Op>& v) {
        if (t > 1)
            v.push_back(collective(name, CommGroup::tp, p.sp ? CommKind::reduce_scatter : CommKind::all_reduce,
                                   T * h * kAct, p.tp_comm_overlap == TpOverlap::full));
    };
    F.push_back(rms_or_layer_norm("norm1", 2 * act_bytes_per_token_h));
    tp_gather("sp.all_gather.attn", F);
    if (m.mla.enabled()) {
        // MLA (DeepSeek-V2, sec. 2.1): down-projections to the latents are replicated across TP, their norms,
        // then per-head up-projections; the RoPE key is shared by the heads.
        const double ql = double(m.mla.q_lora_rank), kl = double(m.mla.kv_lora_rank), r = double(m.mla.rope_head_dim);
        if (ql > 0) {
            F.push_back(linear("mla.q_down", T, ql, h));
            F.push_back(rms_or_layer_norm("mla.q_norm", 2 * T * ql * kAct));
            F.push_back(linear("mla.q_up", T, q, ql));
        } else {
            F.push_back(linear("mla.q", T, q, h));
        }
        F.push_back(linear("mla.kv_down", T, kl + r, h));
        F.push_back(rms_or_layer_norm("mla.kv_norm", 2 * T * kl * kAct));
        F.push_back(linear("mla.kv_up", T, heads * (m.head_dim + vd), kl));
        F.push_back(eager(elementwise("rope", 2 * T * (heads * r + r) * kAct), 4, 20, 6));
    } else {
        Op qkv = chunked(linear("qkv", T, q + kvk + kvv, h));
        qkv.matrix_shares[0] = q / (q + kvk + kvv), qkv.matrix_shares[1] = kvk / (q + kvk + kvv),
        qkv.matrix_shares[2] = kvv / (q + kvk + kvv);
        F.push_back(qkv);
        if (m.position == Position::rope) F.push_back(eager(elementwise("rope", 2 * T * (q + kvk) * kAct), 4, 20, 6));
    }

    // Attention core. Standard (Megatron 2021): scores materialized, softmax + dropout as separate passes over
    // b*heads*s*s elements. Flash: one fused kernel, causal blocks above the diagonal skipped.
    const double s_kv = s;                       // keys attended (all of the sequence, via the CP ring)
    const double s_q = s / p.cp;
    Op core_f;
    std::vector<Op> core_fwd;
    if (p.attention != AttentionKernel::standard) {
        Op a;
        a.name = "flash_attention";
        a.kind = OpKind::attention;
        a.flash2 = p.attention == AttentionKernel::flash2;
        a.role = OpRole::attention_core;
        a.flops = 2 * b * s_q * s_kv * heads * (qd + vd) * 0.5;  // QK^T and PV, causal half
        a.bytes = kAct * T * (q + kvk + kvv + o_in);
        core_fwd.push_back(a);
    } else {
        const double elems = b * heads * s_q * s_kv;
        Op qk = matmul("core.qk", s_q, s_kv, qd);
        qk.flops *= b * heads, qk.bytes = kAct * (T * q + T * kvk) + kAct * elems;
        Op sm = elementwise("core.softmax_dropout", elems * (2 + 2 + mask + (mask ? 2 + 2 : 0)));
        Op pv = matmul("core.pv", s_q, vd, s_kv);
        pv.flops *= b * heads, pv.bytes = kAct * elems + kAct * (T * kvv + T * o_in);
        qk.role = pv.role = OpRole::attention_core;
        sm.role = OpRole::attention_softmax;
        core_fwd = {qk, sm, pv};
    }
    F.insert(F.end(), core_fwd.begin(), core_fwd.end());
    F.push_back(chunked(linear("attn.proj", T, h, o_in)));
    tp_reduce(m.parallel_block ? "tp.reduce.block" : "tp.reduce.attn", F);
    F.push_back(elementwise("residual_dropout1", act_bytes_per_token_h * (3 + mask / kAct)));

    // --- MLP block -------------------------------------------------------------------------------------------
    if (!m.parallel_block) {
        F.push_back(rms_or_layer_norm("norm2", 2 * act_bytes_per_token_h));
        tp_gather("sp.all_gather.mlp", F);
    }
    if (!moe) {
        const double up_n = (m.gated() ? 2 : 1) * f;
        F.push_back(gated_halves(chunked(linear("mlp.up", T, up_n, h))));
        const Op act = elementwise("mlp.act", kAct * T * (up_n + f));
        F.push_back(m.gated() ? eager(act, 6, 10, 2) : act);
        F.push_back(chunked(linear("mlp.down", T, h, f)));
        if (!m.parallel_block) tp_reduce("tp.reduce.mlp", F);
    } else {
        // Mixture of experts (Megatron-core MoE layer with the all-to-all dispatcher): the router scores every
        // token, tokens are permuted by expert and sent to the ranks holding their experts (dispatch), the local
        // experts run as one grouped GEMM, results come back (combine) and are summed with the routing weights.
        const double E = m.moe.experts, k = m.moe.top_k, fe = double(m.moe.expert_ffn_hidden);
        const double etp = p.expert_tp();
        const MoeLoad load = moe_load(m, p);
        const double Td = T / t;  // tokens this rank dispatches
        F.push_back(matmul("moe.router", Tn, E, h));
        F.push_back(elementwise("moe.route_topk", Tn * E * 4 * 3));  // fp32 softmax / sigmoid + top-k
        F.push_back(elementwise("moe.permute", 2 * Td * k * h * kAct));
        // The busiest rank receives skew x its mean share: the exchange ends when it does. With node-limited
        // routing or a node-deduplicating dispatcher the network carries one copy per destination node (op_cost).
        const double a2a_elems = Td * k * h * (load.tokens / (Td * k * etp));
        const bool dedup = p.ep_node_dedup || m.moe.nodes_per_token > 0;
        auto a2a = [&](const char* name, double bytes_per_elem) {
            if (p.ep <= 1) return;
            Op o = collective(name, CommGroup::ep, CommKind::all_to_all, a2a_elems * bytes_per_elem, p.ep_overlap);
            if (dedup) o.a2a_copies = k, o.a2a_node_limit = m.moe.nodes_per_token;
            F.push_back(o);
        };
        a2a("ep.dispatch", m.moe.dispatch_bytes);
        if (etp > 1)  // the expert's TP ranks each need every token of the group
            F.push_back(collective("etp.all_gather", CommGroup::etp, CommKind::all_gather, load.tokens * h * kAct, false));
        const double up_e = (m.gated() ? 2 : 1) * fe / etp;
        const double local_experts = E / p.ep;
        const double wbytes = lp_bytes;
        Op up = gated_halves(linear("moe.experts.up", load.tokens, up_e, h));
        up.m = load.per_expert;  // grouped GEMM: one GEMM per local expert, M tokens each
        up.bytes += (local_experts - 1) * h * up_e * wbytes;  // every local expert's weights
        // An fp8 dispatch sends tokens already quantized for the up-projection (DeepSeek-V3, sec. 3.3.2): the cast
        // runs on this rank's tokens before the top-k copies are made.
        if (m.moe.dispatch_bytes == 1) up.quantized_before_elems = Td * h;
        // A dropless layer's groups are ragged (a capacity factor pads every expert to the same size instead).
        const bool ragged = m.moe.capacity_factor <= 0;
        auto grouped = [&](Op& o, const int* tiles) {
            if (!ragged) return;
            o.groups = local_experts, o.group_rows = load.tokens;
            std::copy(tiles, tiles + 3, o.group_row_tiles);
        };
        grouped(up, p.gmm_row_tiles.up);
        F.push_back(up);
        F.push_back(elementwise("moe.experts.act", kAct * load.tokens * (up_e + fe / etp)));
        Op down = linear("moe.experts.down", load.tokens, h, fe / etp);
        down.m = load.per_expert;
        down.bytes += (local_experts - 1) * h * fe / etp * wbytes;
        grouped(down, p.gmm_row_tiles.down);
        F.push_back(down);
        if (etp > 1)
            F.push_back(collective("etp.reduce_scatter", CommGroup::etp, CommKind::reduce_scatter, load.tokens * h * kAct, false));
        a2a("ep.combine", kAct);
        F.push_back(elementwise("moe.unpermute", 2 * Td * k * h * kAct + Td * k * 4));
        if (m.moe.shared_experts > 0) {  // always-on experts: a dense MLP of shared x expert_ffn_hidden, TP-split
            const double fs = m.moe.shared_experts * fe / t, up_s = (m.gated() ? 2 : 1) * fs;
            F.push_back(gated_halves(linear("moe.shared.up", T, up_s, h)));
            F.push_back(elementwise("moe.shared.act", kAct * T * (up_s + fs)));
            F.push_back(linear("moe.shared.down", T, h, fs));
        }
        if (!m.parallel_block) tp_reduce("tp.reduce.mlp", F);
    }
    F.push_back(elementwise("residual_dropout2", act_bytes_per_token_h * (3 + mask / kAct)));

    // --- backward: GEMMs twice, elementwise ~twice the traffic, mirrored TP collectives --------------------
    auto& B = L.backward;
    for (const auto& o : F) {
        switch (o.kind) {
            case OpKind::matmul:
                if (in_attention_core(o)) {
                    Op d = o;  // batched attention GEMMs: two per forward one
                    d.name += ".bwd";
                    d.pass = OpPass::backward_data;
                    d.flops *= 2, d.bytes *= 2;
                    B.push_back(d);
                } else {
                    backward_of(o, B, p);
                }
                break;
            case OpKind::attention: {
                Op d = o;  // FlashAttention-2 backward: 5 GEMM-sized products vs 2 forward (Dao 2023, sec. 3.1.2)
                d.name += ".bwd";
                d.pass = OpPass::backward_data;
                d.flops *= 2.5;
                d.bytes *= 2;
                B.push_back(d);
                break;
            }
            case OpKind::elementwise: {
                Op d = o;
                d.name += ".bwd";
                d.pass = OpPass::backward_data;
                d.bytes *= 2;
                B.push_back(d);
                break;
            }
            case OpKind::collective: {
                Op d = o;  // all-gather <-> reduce-scatter swap roles; all-reduce stays
                d.name += ".bwd";
                d.pass = OpPass::backward_data;
                d.overlappable = o.overlappable || (o.group == CommGroup::tp && p.tp_comm_overlap != TpOverlap::none);
                if (o.comm == CommKind::all_gather) d.comm = CommKind::reduce_scatter;
                else if (o.comm == CommKind::reduce_scatter) d.comm = CommKind::all_gather;
                B.push_back(d);
                break;
            }
        }
    }

    // --- context parallel: ring exchange of K/V blocks, overlapped with the attention core ------------------
    if (p.cp > 1) {
        const double kv_block = kAct * T * (kvk + kvv);
        if (p.cp_algorithm == ParallelPlan::CpAlgorithm::ring) {
            // Ring attention: cp - 1 steps, each block's K/V to the next rank while the current block computes.
            Op ring = collective("cp.kv_ring", CommGroup::cp, CommKind::send_recv, kv_block * (p.cp - 1), true);
            F.push_back(ring);
            Op ring_b = ring;
            ring_b.name += ".bwd";
            ring_b.pass = OpPass::backward_data;
            ring_b.comm_bytes *= 2;  // K/V again plus their gradients
            B.push_back(ring_b);
            // Each ring step is its own attention call whose partial output is merged into the running one by its
            // log-sum-exp (Transformer Engine's AttnFuncWithCPAndKVP2P: flash_attn_fwd_out_correction into an fp32
            // output, cast to 16-bit at the end; PyTorch's ring attention merges the same way): per step the
            // step's output is read and the fp32 sum read and written. The backward adds each step's dQ into the
            // 16-bit dQ and each step's dK/dV into the buffer that travels the ring.
            const double out_elems = T * o_in, kv_elems = T * (kvk + kvv);
            for (auto* v : {&F, &B})
                for (Op& o : *v)
                    if (o.kind == OpKind::attention) o.kernels = p.cp;  // one call per ring step
            F.push_back(elementwise(kCpOutMerge, p.cp * out_elems * (kAct + 4 + 4) + out_elems * (4 + kAct),
                                    2 * p.cp + 1));
            Op merge_b = elementwise("cp.grad_accumulate", p.cp * (out_elems + kv_elems) * 3 * kAct, 2 * p.cp);
            merge_b.pass = OpPass::backward_data;
            B.push_back(merge_b);
        } else {
            // All-gather K/V before attention (Llama 3, sec. 3.3.2): simple, not hidden; dK/dV reduce-scattered.
            F.push_back(collective("cp.kv_all_gather", CommGroup::cp, CommKind::all_gather, kv_block * p.cp, false));
            B.push_back(collective("cp.kv_reduce_scatter", CommGroup::cp, CommKind::reduce_scatter, kv_block * p.cp, false));
            B.back().pass = OpPass::backward_data;
        }
    }

    // --- recomputation -------------------------------------------------------------------------------------
    if (p.recompute == Recompute::full && p.recompute_needed_only) {
        ParallelPlan input_only = p;  // the layer input kept, nothing else: what the backward needs runs again
        input_only.remat = RematNames{};
        named_recompute(F, m, input_only, L.recompute);
    } else if (p.recompute == Recompute::full) {
        L.recompute = F;
    } else if (p.per_op_selective()) {
        // TorchTitan's per-op policy: the odd-numbered weight matrices' outputs (the first, third, ... in forward
        // order) are kept with what alternate_fate() keeps; everything else runs again, the even-numbered matrices
        // as their share of the GEMM that fuses them.
        int matrix = 0;
        for (const auto& o : F) {
            if (o.kind == OpKind::matmul && !in_attention_core(o)) {
                const double share = alternate_split(o, matrix).recomputed;
                if (share > 0) L.recompute.push_back(share_of(o, share));
            } else if (alternate_fate(o, p) == AlternateFate::recomputed) {
                L.recompute.push_back(o);
            }
        }
    } else if (p.recompute == Recompute::selective && p.attention == AttentionKernel::standard) {
        L.recompute = core_fwd;  // Korthikanti et al. 2022: recompute only the attention core
    } else if (p.recompute == Recompute::minimal) {
        for (const auto& o : F)  // weight-GEMM outputs are saved; everything between them is recomputed
            if (o.kind == OpKind::elementwise || in_attention_core(o))
                L.recompute.push_back(o);
    } else if (p.recompute == Recompute::names) {
        named_recompute(F, m, p, L.recompute);
    }
    add_quantize_ops(L, p);  // after the mirror and the recomputation lists, which must not copy the casts
    return L;
}

LayerOps embedding_ops(const ModelSpec& m, const ParallelPlan& p) {
    const double T = double(p.micro_batch) * m.seq_len / p.cp;
    const double h = m.hidden;
    LayerOps L;
    L.forward.push_back(elementwise("embedding.lookup", 2 * T * h * kAct));
    if (p.tp > 1)  // vocab-parallel embedding: partial rows summed across the TP group
        L.forward.push_back(collective("tp.reduce.embedding", CommGroup::tp,
                                       p.sp ? CommKind::reduce_scatter : CommKind::all_reduce, T * h * kAct, false));
    L.backward.push_back(elementwise("embedding.grad", 3 * T * h * kAct));
    L.backward.back().pass = OpPass::backward_data;
    return L;
}

LayerOps head_ops(const ModelSpec& m, const ParallelPlan& p) {
    const double T = double(p.micro_batch) * m.seq_len / p.cp;
    const double h = m.hidden, V = double(m.vocab) / p.tp;
    LayerOps L;
    L.forward.push_back(norm("final_norm", 2 * (p.sp ? T / p.tp : T) * h * kAct));
    if (p.tp > 1 && p.sp)
        L.forward.push_back(collective("sp.all_gather.head", CommGroup::tp, CommKind::all_gather, T * h * kAct, false));
    Op logits = matmul("logits", T, V, h);  // kept in 16-bit: low-precision recipes exclude the output layer
    L.forward.push_back(logits);
    // Cross-entropy in fp32 over the vocab shard: read logits, write fp32 copy, exp, reductions.
    L.forward.push_back(elementwise("cross_entropy", T * V * (kAct + 4 + 4), 3));
    L.backward.push_back(elementwise("cross_entropy.bwd", T * V * (4 + kAct), 2));
    L.backward.back().pass = OpPass::backward_data;
    backward_of(logits, L.backward, p);
    if (p.tp > 1) {
        L.backward.push_back(collective("tp.reduce.head", CommGroup::tp,
                                        p.sp ? CommKind::reduce_scatter : CommKind::all_reduce, T * h * kAct, false));
        L.backward.back().pass = OpPass::backward_data;
    }
    return L;
}

}  // namespace podsim
