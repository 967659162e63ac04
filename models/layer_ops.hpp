// The ops of one transformer layer (and of the embedding/logits ends) for one micro-batch on one device:
// FLOPs, HBM bytes and the collectives the parallel strategy inserts, with the quantize ops of its low-precision
// GEMMs (quantize_ops.hpp). Readable line by line against the papers.
#pragma once
#include <string>
#include <vector>

#include "models/plan.hpp"
#include "models/transformer.hpp"

namespace podsim {

enum class OpKind { matmul, attention, elementwise, collective };
const char* to_string(OpKind k);
// Which way an op's kernel runs: forward (also when recomputed), or backward, where a GEMM's is two kernels: the
// input gradient (dgrad; every other backward kernel counts as this) and the weight gradient (wgrad).
enum class OpPass { forward, backward_data, backward_weight };
// Where in the layer an op sits, when that changes its timing: the attention core (QK^T, softmax, PV, or the fused
// kernel) runs as one measured kernel that takes each op's share, and hides the CP ring; its softmax has no
// kernel of its own in a profile.
enum class OpRole { plain, attention_core, attention_softmax };
enum class CommGroup { tp, cp, fsdp, ep, etp };
enum class CommKind { all_reduce, reduce_scatter, all_gather, send_recv, all_to_all };
const char* to_string(CommGroup g);  // "tp", "cp", "fsdp", "ep", "etp"
const char* to_string(CommKind k);   // "all-reduce", "reduce-scatter", "all-gather", "send-recv", "all-to-all"
// The number format a GEMM's operands are in, which sets the tensor-core / MXU rate it runs at (quantize_ops.hpp
// says which GEMM runs in which, per precision and pass). b16: bf16 or fp16.
enum class NumFormat { b16, fp8, int8, fp4 };
const char* to_string(NumFormat f);

struct Op {
    std::string name;  // display, and the key of its measured kernel in a profile
    OpKind kind = OpKind::elementwise;
    OpPass pass = OpPass::forward;
    OpRole role = OpRole::plain;
    double flops = 0;       // executed FLOPs (causal flash attention skips the masked half)
    double bytes = 0;       // HBM traffic
    double m = 0, n = 0, k = 0;  // GEMM shape (per matrix); batch folded into flops
    NumFormat format = NumFormat::b16;  // a GEMM's operand format (quantize_ops.hpp); b16 for every other op
    bool quantize = false;  // a cast of a GEMM operand to its low-precision format (quantize_ops.hpp)
    bool norm = false;      // a normalization (a GEMM after it may have its input cast inside it)
    double quantized_before_elems = 0;  // > 0: a GEMM whose input was quantized earlier, on this many elements
    CommGroup group = CommGroup::tp;
    CommKind comm = CommKind::all_reduce;
    double comm_bytes = 0;  // full buffer size as collective_cost expects
    bool overlappable = false;  // may hide under compute of the same pass (FSDP prefetch, CP ring, TP overlap)
    // Expert all-to-all sent once per destination node and forwarded over NVLink (DeepEP, DeepSeek-V3's kernels):
    // each token's `a2a_copies` copies cross the network only to the distinct nodes they go to, at most
    // `a2a_node_limit` of them (node-limited routing; 0 = no limit). a2a_copies = 0: a plain all-to-all.
    double a2a_copies = 0;
    int a2a_node_limit = 0;
    int kernels = 1;
    bool flash2 = false;  // the attention core as the FlashAttention-2 kernel (ChipEfficiency::flash2_attention_peak_fraction)
    // The weight matrices a GEMM fuses, as shares of its N in the order the forward multiplies by them (QKV: q, k,
    // v; a gated MLP's up: gate, up); one matrix otherwise. TorchTitan's selective recomputation counts them.
    double matrix_shares[3] = {1, 0, 0};
    // A GEMM decomposed along M into this many sequential pieces so a TP collective can run piece by piece under it
    // (Transformer Engine userbuffers / XLA collective matmul: one piece per TP rank). Each piece is a GEMM of M/chunks
    // rows with its own launch.
    int chunks = 1;
    // A grouped GEMM run as one kernel over M-tiles of group_row_tiles[pass] rows (0: none) that `groups` groups of
    // `group_rows` rows in all share: a tile holding rows of two groups is computed once for each (op_cost.cpp).
    double groups = 0, group_rows = 0;
    int group_row_tiles[3] = {0, 0, 0};
};

inline bool is_backward(const Op& o) { return o.pass != OpPass::forward; }
inline bool in_attention_core(const Op& o) { return o.kind == OpKind::attention || o.role != OpRole::plain; }

struct LayerOps {
    std::vector<Op> forward, backward, recompute;
};

// One layer, one micro-batch, one device (its TP/CP shard); `moe`: the layer's MLP is a mixture of experts.
LayerOps layer_ops(const ModelSpec& m, const ParallelPlan& p, bool moe = false);
// Bytes one layer keeps for its backward under TorchTitan's selective recomputation (recompute=selective with
// SelectiveRecompute::alternate_matmuls): what its policy saves, counted over the ops layer_ops() builds.
double alternate_selective_saved_bytes(const ModelSpec& m, const ParallelPlan& p, bool moe = false);

// What a mixture-of-experts layer computes on its busiest expert rank: tokens per micro-batch through its local
// experts (routing skew, capped by the capacity factor), and the share of routed tokens dropped.
struct MoeLoad {
    double tokens = 0;         // token-expert pairs the busiest rank computes
    double per_expert = 0;     // tokens per local expert (the grouped GEMM's M)
    double dropped_fraction = 0;
};
MoeLoad moe_load(const ModelSpec& m, const ParallelPlan& p);
// Embedding (first stage) and final norm + logits + loss (last stage), one micro-batch.
LayerOps embedding_ops(const ModelSpec& m, const ParallelPlan& p);
LayerOps head_ops(const ModelSpec& m, const ParallelPlan& p);

// FLOPs executed per micro-batch and layer summed over a pass list, for HFU.
double total_flops(const std::vector<Op>& ops);

}  // namespace podsim
