#include "models/quantize_ops.hpp"

#include <algorithm>

namespace podsim {

namespace {

constexpr double kSource = 2;     // bytes per element of the bf16 tensor a quantize kernel reads
constexpr double kAmax = 4;       // one fp32 amax per tensor
constexpr double kHistory = 1024; // TE DelayedScaling's default amax_history_len (common/recipe/__init__.py)

// What a recipe's quantize kernels do, from its implementation.
struct Recipe {
    // Passes over the bf16 source. 2 where the scale needs the tensor's own amax before any element is written:
    // TE current scaling (an amax kernel, then the cast) and NVFP4 (the per-tensor fp32 scale of its two-level
    // scaling). 1 where the scale is known before (delayed scaling: the amax history) or found inside the kernel
    // (blockwise: each block's own amax); for AQT the abs-max reduction is assumed fused into the tensor's
    // producer by XLA, leaving one read.
    int reads = 1;
    // TE quantizes a tensor once into both the copies its two GEMMs read (row-wise, and column-wise for the
    // transposed use: cast-transpose); AQT's dot_general quantizes its own operands in each dot, so the dgrad
    // re-quantizes the weight (config_v3 sets dlhs.rhs.use_fwd_quant = False, aqt/jax/v2/config.py).
    bool both_copies = true;
    // TE keeps the quantized weights across the micro-batches of a step (the linear layers' is_first_microbatch
    // weight cache, which Megatron-core passes), so a weight is quantized once per step; AQT quantizes it in every
    // traced forward and backward.
    bool weights_cached = true;
    // TE current scaling and NVFP4 all-reduce the amax of a sequence-parallel tensor over the TP group, so that
    // every shard is scaled alike: the gathered input of a column-parallel layer and the gradient of a row-parallel
    // one (module/linear.py, _customize_quantizers_*: with_amax_reduction, amax_reduction_group = tp_group).
    bool tp_amax = false;
    // A GEMM fed by a norm (TE's LayerNormLinear) gets its input quantized by the norm kernel itself, which writes
    // the fp8 copies instead of its bf16 output, where the scale is known before the norm runs: delayed scaling
    // and block scaling (scales found per block as it writes). Not for current scaling or NVFP4, whose per-tensor
    // amax needs the whole output first, nor for AQT, where podsim keeps the quantize pass as XLA's own.
    bool norm_fused = false;
};

Recipe recipe_of(const ParallelPlan& p) {
    Recipe r;
    if (p.precision == Precision::int8) r.both_copies = false, r.weights_cached = false;
    if (p.precision == Precision::fp4) r.reads = 2, r.tp_amax = true;
    if (p.precision == Precision::fp8 && p.fp8_recipe == Fp8Recipe::tensorwise) r.reads = 2, r.tp_amax = true;
    if (p.precision == Precision::fp8 && p.fp8_recipe != Fp8Recipe::tensorwise) r.norm_fused = true;
    return r;
}

Op quantize_op(std::string name, OpPass pass, double elems, double written_bytes_per_elem, const Recipe& r) {
    Op o;
    o.name = std::move(name);
    o.kind = OpKind::elementwise;
    o.pass = pass;
    o.quantize = true;
    o.bytes = elems * (kSource * r.reads + written_bytes_per_elem);
    o.kernels = r.reads;
    return o;
}

Op amax_all_reduce(std::string name, CommGroup g, OpPass pass, double tensors) {
    Op o;
    o.name = std::move(name);
    o.kind = OpKind::collective;
    o.pass = pass;
    o.group = g;
    o.comm = CommKind::all_reduce;
    o.comm_bytes = kAmax * tensors;
    o.kernels = 0;
    return o;  // blocking: torch.distributed.all_reduce(..., async_op=False) before the scale is used
}

bool is_low(const Op& o) { return o.kind == OpKind::matmul && o.format != NumFormat::b16; }

}  // namespace

NumFormat gemm_format(const ParallelPlan& p, OpPass pass) {
    switch (p.precision) {
        case Precision::fp16:
        case Precision::bf16: return NumFormat::b16;
        case Precision::fp8: return NumFormat::fp8;
        case Precision::int8: return pass == OpPass::backward_weight ? NumFormat::b16 : NumFormat::int8;
        case Precision::fp4: return NumFormat::fp4;
    }
    return NumFormat::b16;
}

double operand_bytes(NumFormat f, const ParallelPlan& p) {
    switch (f) {
        case NumFormat::b16: return 2;
        // Per-tensor scales are one float a tensor; blockwise adds a scale per 32 elements: MXFP8's E8M0 byte per
        // 32 (OCP MX spec) or DeepSeek-V3's fp32 per 1x128 (4 / 128, the same 1/32).
        case NumFormat::fp8: return 1 + (p.fp8_recipe == Fp8Recipe::blockwise ? 1.0 / 32 : 0);
        case NumFormat::int8: return 1;  // per-channel scales: one float a row, negligible
        case NumFormat::fp4: return 0.5 + 1.0 / 16;  // NVFP4: an E4M3 scale per 16 elements
    }
    return 2;
}

int low_precision_gemms(const std::vector<Op>& ops) {
    return static_cast<int>(std::count_if(ops.begin(), ops.end(), is_low));
}

void add_quantize_ops(LayerOps& L, const ParallelPlan& p) {
    if (gemm_format(p, OpPass::forward) == NumFormat::b16) return;
    const Recipe r = recipe_of(p);
    const NumFormat dgrad = gemm_format(p, OpPass::backward_data), wgrad = gemm_format(p, OpPass::backward_weight);
    const double dgrad_b = operand_bytes(dgrad, p);
    const double wgrad_b = wgrad == NumFormat::b16 ? 0 : operand_bytes(wgrad, p);  // its column-wise copies
    const double weight_share = r.weights_cached ? 1.0 / std::max<long long>(1, p.micro_batches()) : 1.0;
    const bool tp_amax = r.tp_amax && p.sp && p.tp > 1;

    // A forward GEMM X[M,K] . W[K,N] (times its batch for grouped GEMMs): its input X for it and, transposed, for
    // the wgrad; its weight W for it and, transposed, for the dgrad.
    auto forward = [&](const std::vector<Op>& in, bool recompute) {
        std::vector<Op> out;
        const Op* producer = nullptr;  // the last kernel before this op (collectives move, not produce)
        for (const Op& o : in) {
            if (is_low(o)) {
                const double fwd_b = operand_bytes(o.format, p), copies = fwd_b + (r.both_copies ? wgrad_b : 0);
                Op x = quantize_op(o.name + ".quant_x", o.pass, o.flops / (2 * o.n), copies, r);
                if (o.quantized_before_elems > 0) {
                    x = quantize_op(o.name + ".quant_x (before dispatch)", o.pass, o.quantized_before_elems, copies, r);
                } else if (r.norm_fused && producer && producer->norm) {
                    // Inside the norm: its copies' bytes beyond the bf16 output they replace, no kernel of its own.
                    x.bytes = o.flops / (2 * o.n) * (copies - kSource);
                    x.kernels = 0;
                    x.name += " (in " + producer->name + ")";
                }
                out.push_back(x);
                if (!recompute || !r.weights_cached) {
                    Op w = quantize_op(o.name + ".quant_w", o.pass, o.flops / (2 * o.m),
                                       fwd_b + (r.both_copies ? dgrad_b : 0), r);
                    w.bytes *= weight_share;
                    out.push_back(w);
                }
            }
            out.push_back(o);
            if (o.kind != OpKind::collective) producer = &o;
            if (tp_amax && o.kind == OpKind::collective && o.group == CommGroup::tp && o.comm == CommKind::all_gather)
                out.push_back(amax_all_reduce(o.name + ".amax", CommGroup::tp, o.pass, 1));
        }
        return out;
    };
    L.forward = forward(L.forward, false);
    L.recompute = forward(L.recompute, true);  // full and TorchTitan's selective recomputation repeat GEMMs

    // Backward: the output gradient dY[M,N] for the dgrad and, transposed, for the wgrad; the dgrad dY . W^T has
    // m = M, n = K, k = N.
    std::vector<Op> B;
    for (const Op& o : L.backward) {
        if (is_low(o) && o.pass == OpPass::backward_data) {
            B.push_back(quantize_op(o.name.substr(0, o.name.size() - 6) + ".quant_dy", o.pass, o.flops / (2 * o.n),
                                    dgrad_b + (r.both_copies ? wgrad_b : 0), r));
            if (!r.weights_cached)
                B.push_back(quantize_op(o.name + ".quant_w", o.pass, o.flops / (2 * o.m), dgrad_b, r));
        }
        B.push_back(o);
        // The gradient of a row-parallel GEMM's output, gathered back over the sequence (a backward TP all-gather
        // is the mirror of a forward reduce-scatter).
        if (tp_amax && o.kind == OpKind::collective && o.group == CommGroup::tp && o.comm == CommKind::all_gather)
            B.push_back(amax_all_reduce(o.name + ".amax", CommGroup::tp, o.pass, 1));
    }
    L.backward = std::move(B);
}

LayerOps chunk_ops(const ParallelPlan& p, double gemms) {
    LayerOps L;
    if (p.precision != Precision::fp8 || p.fp8_recipe != Fp8Recipe::delayed || gemms <= 0) return L;
    // TE keeps 3 scaling slots per GEMM forward (input, weight, output) and 2 backward (output and input
    // gradients). When the region's forward or backward ends, every amax is concatenated, all-reduced (MAX) over the
    // amax reduction group, which Megatron-core makes the TP x DP x CP ranks (parallel_state.get_amax_reduction_group),
    // and the histories and scales updated in one fused kernel (reads and writes each history).
    auto pass_ops = [&](std::vector<Op>& out, OpPass pass, double tensors) {
        Op h;
        h.name = "fp8.amax_history";
        h.kind = OpKind::elementwise;
        h.pass = pass;
        h.quantize = true;
        h.bytes = 2 * kHistory * 4 * tensors;
        out.push_back(h);
        // The group's all-reduce, as one per dimension (a max over each in turn is the max over all).
        if (p.tp > 1) out.push_back(amax_all_reduce("fp8.amax_reduce.tp", CommGroup::tp, pass, tensors));
        if (p.cp > 1) out.push_back(amax_all_reduce("fp8.amax_reduce.cp", CommGroup::cp, pass, tensors));
        if (p.dp > 1) out.push_back(amax_all_reduce("fp8.amax_reduce.dp", CommGroup::fsdp, pass, tensors));
    };
    pass_ops(L.forward, OpPass::forward, 3 * gemms);
    pass_ops(L.backward, OpPass::backward_data, 2 * gemms);
    return L;
}

}  // namespace podsim
