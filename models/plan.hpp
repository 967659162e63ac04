// How a model is trained on a system: the parallel split, batch, precision, recomputation and framework behaviour.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "hardware/json_reader.hpp"
#include "hardware/registry.hpp"
#include "models/remat_names.hpp"

namespace podsim {

enum class Schedule { gpipe, one_f_one_b, interleaved };
const std::vector<ChoiceDoc>& schedule_docs();  // `podsim list`, in enum order
// selective: the attention core (Korthikanti et al. 2022); minimal: every forward op but the weight GEMMs
// (JAX checkpoint_dots policies, MaxText remat_policy=minimal); full: the whole layer from its input; names: what the
// backward needs of the tensors ParallelPlan::remat does not keep (MaxText's save_* and custom policies).
enum class Recompute { none, selective, minimal, full, names };
// The linear layers' GEMM precision (quantize_ops.hpp: which pass runs in which format). fp8: Transformer Engine;
// int8: AQT (MaxText quantization=int8), weight gradients in bf16; fp4: NVFP4. Master weights, optimizer,
// attention and logits stay in higher precision in all of them.
enum class Precision { fp16, bf16, fp8, int8, fp4 };
const std::vector<ChoiceDoc>& precision_docs();  // `podsim list`, in enum order
// How an fp8 plan scales its tensors (Transformer Engine's recipes): delayed (DelayedScaling: scales from an amax
// history, amaxes all-reduced once per region), tensorwise (Float8CurrentScaling: each tensor's own amax first),
// blockwise (MXFP8BlockScaling / Float8BlockScaling: a scale per 1x32 or 1x128 block, found inside the cast).
enum class Fp8Recipe { delayed, tensorwise, blockwise };
const std::vector<ChoiceDoc>& fp8_recipe_docs();
// The GEMM-efficiency class a precision is priced in ("16bit" or "fp8", as profiles name them): no published fit
// exists for int8 or fp4, so int8 GEMMs take the 16-bit fraction (MXU / tensor-core utilization is the same
// mechanism) and fp4 ones the fp8 fraction; stated assumptions (README).
const char* efficiency_class(Precision p);
bool in_fp8_efficiency_class(Precision p);
// standard: scores materialized (Megatron-LM 2021); flash: a fused kernel of the chip's own generation (FlashAttention-3
// / cuDNN fused attention on Hopper, FlashAttention-2 on Ampere, Pallas splash on TPU); flash2: PyTorch SDPA's
// FlashAttention-2 kernel (warp-level MMA: on Hopper it cannot use the wgmma/TMA path, so it runs at the chip's
// flash2_attention_peak_fraction; a chip without that figure prices it as its own kernel: Ampere, where it is,
// and Blackwell, where TorchTitan asks SDPA for cuDNN first).
enum class AttentionKernel { standard, flash, flash2 };
// What `selective` recomputation recomputes: attention_core (Korthikanti et al. 2022: the attention core, nothing
// under a flash kernel); alternate_matmuls (TorchTitan's per-op policy: every op is recomputed except the attention
// kernel, the TP reduce-scatters and every other weight GEMM in forward order).
enum class SelectiveRecompute { attention_core, alternate_matmuls };
// none: TP collectives block; backward: the input-gradient collectives run under the weight-gradient GEMMs
// (asynchronous dgrad communication, Megatron-LM / XLA latency hiding); full: also the forward ones
// (userbuffers / collective matmul decomposition).
enum class TpOverlap { none, backward, full };
// How a pipeline stage hands its boundary activation forward (and its gradient back) to the next stage.
enum class PipelineP2p {
    scatter_gather,  // each TP rank sends 1/tp and the receiver all-gathers it over NVLink, on a side stream
                     // (Megatron-LM's --scatter-gather-tensors-in-pipeline)
    sequence_shard,  // each rank sends the tensor as it holds it (1/tp with sequence parallelism, else whole), on a
                     // side stream (Megatron-core's p2p_communication, XLA)
    full_blocking,   // every TP rank sends the whole tensor with blocking send/recv on the compute stream
                     // (DeepSpeed's PipelineEngine)
};

const char* to_string(Schedule s);
const char* to_string(PipelineP2p p);
const char* to_string(Recompute r);
const char* to_string(Precision p);
const char* to_string(Fp8Recipe r);
const char* to_string(AttentionKernel a);
const char* to_string(SelectiveRecompute s);
// A MaxText remat_policy name (decoders.py get_remat_policy): its recomputation and, for the named-tensor policies,
// what it keeps; nullopt for a name that is none of them. "custom" keeps what `tensors` says (remat_tensors_at).
struct RematPolicy {
    Recompute recompute = Recompute::full;
    RematNames names;
};
std::optional<RematPolicy> maxtext_remat_policy(const std::string& name);
std::string maxtext_remat_policy_list();  // the names, for messages
// The policy `name` that `o`.`key` states, custom's tensors read from `o`.remat_tensors; an unknown name, custom without
// remat_tensors or remat_tensors with another policy is an error naming the path.
RematPolicy remat_policy_at(const JsonObject& o, const char* key, const std::string& name);
// The attention kernel / TP overlap a JSON field names (one_of: an unknown name is an error naming the path).
AttentionKernel attention_kernel_at(const JsonObject& o, const char* key);
TpOverlap tp_overlap_at(const JsonObject& o, const char* key);
const char* to_string(TpOverlap t);

// Row-tile sizes of a grouped matmul kernel, indexed by OpPass (forward, backward_data, backward_weight), for an
// MoE layer's up (wi) and down (wo) expert GEMMs; 0 = no shared tiles.
struct GroupedGemmTiles {
    int up[3] = {0, 0, 0}, down[3] = {0, 0, 0};
    bool operator==(const GroupedGemmTiles&) const = default;
    static GroupedGemmTiles all(int rows) {
        GroupedGemmTiles t;
        for (int i = 0; i < 3; ++i) t.up[i] = t.down[i] = rows;
        return t;
    }
};

struct ParallelPlan {
    int dp = 1;      // data-parallel replicas (includes the ZeRO/FSDP sharding group)
    int tp = 1;      // tensor parallel
    int pp = 1;      // pipeline stages
    int vpp = 1;     // model chunks per stage (interleaved 1F1B when > 1)
    int cp = 1;      // context parallel
    int ep = 1;      // expert parallel: routed experts split over ep ranks of the data/context/tensor dims
    int etp = 0;     // expert tensor parallel (0: same as tp, Megatron-core's default)
    bool sp = false; // sequence parallelism over the TP group (Korthikanti et al. 2022)
    int zero = 0;    // 0: none, 1: optimizer states sharded (distributed optimizer), 2: + gradients, 3: + weights (FSDP)
    Schedule schedule = Schedule::one_f_one_b;
    long long micro_batch = 1;      // sequences per micro-batch per data-parallel replica
    long long global_batch = 1;     // sequences per optimizer step
    Precision precision = Precision::bf16;  // GEMM precision; fp8 keeps attention and master weights in higher precision
    Fp8Recipe fp8_recipe = Fp8Recipe::delayed;  // scaling of fp8 plans (the scenario's, or fp8 found by a search)
    Recompute recompute = Recompute::none;
    // Layers whose saved activations go to host memory during the forward and come back for the backward
    // (Megatron-Core's cpu_offloading_num_layers: the first layers of the model, without pipelining or
    // recomputation, fewer than all layers); 0: none.
    int offload_layers = 0;
    RematNames remat;  // recompute == names: the tensors kept on the device or in host memory
    AttentionKernel attention = AttentionKernel::flash;
    SelectiveRecompute selective = SelectiveRecompute::attention_core;  // the stack's meaning of recompute=selective
    // Eager PyTorch (no torch.compile): the model code's elementwise steps (RMSNorm, RoPE, the gated activation) run
    // as separate kernels, each a pass over HBM (layer_ops.cpp); false: fused kernels (Megatron / TE / XLA / compile).
    bool eager_elementwise = false;
    // Full recomputation reruns only the forward ops whose outputs the backward uses (JAX's jax.checkpoint: the
    // recomputed program is dead-code eliminated, so a dense MLP's down projection, whose output only feeds the next
    // layer, does not run again); false: the whole checkpointed forward (torch.utils.checkpoint, Megatron's
    // CheckpointFunction).
    bool recompute_needed_only = false;
    // Framework behaviour (what overlaps with what).
    TpOverlap tp_comm_overlap = TpOverlap::none;
    bool ep_overlap = false;            // expert all-to-alls hidden under another micro-batch's compute (DualPipe,
                                        // Megatron-core's a2a overlap); false: they block
    bool ep_node_dedup = false;         // the dispatcher sends a token to each node once (DeepEP); see Op::a2a_copies
    enum class CpAlgorithm { ring, all_gather } cp_algorithm = CpAlgorithm::ring;  // ring attention or KV all-gather
    // The expert GEMMs of a dropless MoE layer as one grouped-matmul kernel over M-tiles of this many rows, per
    // pass (forward, input gradient, weight gradient) and matrix (up, down); a tile that straddles a group boundary
    // is computed once per group in it (MaxText's megablox / Tokamax gmm; GroupedGemmTiles). 0: each group is its
    // own GEMM, no tile shared (cuBLAS / CUTLASS grouped GEMMs; podsim models no tile quantization).
    GroupedGemmTiles gmm_row_tiles;
    bool dp_overlap = true;             // gradient reduction bucketed under the last backward (torch DDP, Megatron-core)
    bool param_gather_overlap = true;   // ZeRO-1/2 parameter all-gather hidden under the next forward
    bool fp8_saved_inputs = false;      // fp8 plans keep each linear layer's input for the backward as its fp8 copy
                                        // (Transformer Engine; DeepSeek-V3), not in 16 bits (torchao, XLA)
    bool act_fused_into_gemm = false;   // the MLP activation is computed inside the down GEMM's operand fusion (XLA
                                        // on TPU), so its output is never materialized or saved
    // HBM bytes per local parameter that each micro-batch's backward moves outside the GEMMs to accumulate its
    // gradients (0: accumulated in the weight-gradient GEMM itself, Megatron's gradient_accumulation_fusion, XLA).
    double grad_accum_bytes_per_param = 0;
    PipelineP2p pp_p2p = PipelineP2p::scatter_gather;
    bool zero_grad_all_reduce = false;  // ZeRO-1 gradients all-reduced whole, each rank then updating its shard
                                        // (DeepSpeed's bf16 pipeline path, ZeRO stage < 2), not reduce-scattered
    bool dcn_sync_overlap = true;       // FSDP across slices: the cross-slice (DCN) gradient all-reduce bucketed under
                                        // the backward; false: after it (XLA reduces the scanned gradient carry)
    double grad_reduce_bytes = 2;       // bytes per gradient element on the wire (2: bf16/fp16, 4: fp32)
    double param_gather_bytes = 2;      // bytes per weight element gathered by FSDP / distributed optimizer
    double master_weight_bytes = 4;     // fp32 master copy
    double optimizer_state_bytes = 8;   // Adam's two moments per parameter (fp32; bf16 where the weights are)
    bool compute_weight_copy = true;    // a 16-bit copy of the weights besides the master (false: cast on use, XLA)

    long long micro_batches() const { return global_batch / (micro_batch * dp); }
    // How the data-parallel gradient sync reduces: sharded optimizer states take a reduce-scatter unless the stack
    // all-reduces whole gradients anyway.
    bool grad_sync_reduce_scatter() const { return zero >= 1 && !(zero_grad_all_reduce && zero == 1); }
    int chips() const { return dp * tp * pp * cp; }
    // Selective recomputation as TorchTitan's per-op policy (layer_ops.cpp builds it, memory.cpp counts it).
    bool per_op_selective() const {
        return recompute == Recompute::selective && selective == SelectiveRecompute::alternate_matmuls;
    }
    int expert_tp() const { return etp > 0 ? etp : tp; }
    // Expert data parallelism: the copies of each expert (tp x cp x dp = etp x ep x edp).
    // (In 64 bits: etp x ep need not fit an int; the result does where check_split admits the plan.)
    int edp() const {
        return static_cast<int>(static_cast<long long>(dp) * cp * tp / (static_cast<long long>(expert_tp()) * ep));
    }
};

// A plan's recomputation as printed: the mode, or for names "names(query_proj,key_proj; offloaded: ...)".
std::string recompute_label(const ParallelPlan& p);

// The fields of a plan a scenario or a published record may leave out (omitted or null): podsim completes them
// with the best feasible choice (plan_completion.hpp). Framework behaviours (attention kernel, overlaps) left out
// take the software stack's documented value (software_stack.hpp).
enum class PlanField {
    dp, tp, pp, vpp, cp, ep, sp, zero, micro_batch, precision, recompute, offload_layers,
    attention, tp_comm_overlap, dp_overlap, param_gather_overlap
};
const char* to_string(PlanField f);  // the JSON path in a scenario: "parallel.tp", "batch.micro_batch", ...
struct PlanFields {
    unsigned bits = 0;
    bool has(PlanField f) const { return (bits >> static_cast<unsigned>(f)) & 1u; }
    void add(PlanField f) { bits |= 1u << static_cast<unsigned>(f); }
    void remove(PlanField f) { bits &= ~(1u << static_cast<unsigned>(f)); }
    bool empty() const { return bits == 0; }
    bool any_structural() const;  // a free field other than the framework behaviours
};
// A plan with some fields free: `plan` holds the given values and placeholders (ParallelPlan's defaults) where free.
struct PartialPlan {
    ParallelPlan plan;
    PlanFields free;
    bool cp_algorithm_stated = false;  // parallel.cp_algorithm given: the software stack's does not replace it
    bool gmm_row_tiles_stated = false;  // training.grouped_gemm_row_tile given: likewise
};

// training.grouped_gemm_row_tile (a scenario) or settings.grouped_gemm_row_tile (a published record): one row count
// for every pass and matrix, or {"up": [forward, dgrad, wgrad], "down": [...]} (MaxText's wi_tile_*_batch_seq and
// wo_tile_*_batch_seq); 0 = no shared tiles. Fails at that path otherwise.
GroupedGemmTiles gmm_row_tiles_at(const JsonObject& o, const char* key);

// Fails at `par`.dp when dp x tp x pp x cp is beyond limits::max_chips (so chips() cannot overflow).
void check_chip_product(const ParallelPlan& p, const JsonObject& par);
// Every field may be omitted or null (then free), except the global batch.
PartialPlan plan_from_json(const JsonObject& parallel, const JsonObject& batch, const JsonObject& training);

}  // namespace podsim
