// Software stacks as data (hardware/catalog/software/*.json): what a training framework does — which
// communications it overlaps, the attention kernel it uses, how it keeps weights and reduces gradients, which ZeRO
// stages and schedules it offers, its dropout and bias defaults — each behaviour with its source. A published record
// or a scenario names its framework; each behaviour is a mechanism of the step model (a collective hidden or not, a
// kernel present or not), never a per-framework efficiency factor.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "models/plan.hpp"

namespace podsim {

enum class SpPolicy { never, optional, always };  // always: activations sharded over the tensor axis (XLA/GSPMD)
enum class WeightKeeping { master_and_16bit_copy, fp32_cast_on_use };

struct SoftwareStack {
    std::string id;                   // "megatron-core"
    std::string description;
    std::vector<std::string> names;   // how records and users name it ("NeMo 24.07", "Megatron-DeepSpeed", ...)
    bool in_catalog = true;           // false: a framework the catalog does not know (unknown_stack())
    TpOverlap tp_comm_overlap = TpOverlap::none;
    bool dp_overlap = true;
    double grad_reduce_bytes = 2;
    bool param_gather_overlap = true;
    AttentionKernel attention = AttentionKernel::flash;
    SelectiveRecompute selective = SelectiveRecompute::attention_core;  // what recompute=selective recomputes
    bool eager_elementwise = false;   // its default: the model's elementwise ops unfused (no torch.compile)
    bool recompute_needed_only = false;  // full recomputation reruns only what the backward uses (JAX's autodiff)
    SpPolicy sequence_parallel = SpPolicy::optional;
    bool interleaved_pipeline = true;
    bool uneven_virtual_stages = false;  // model chunks may hold unequal layer counts (a layout); false: Megatron-LM's
                                         // rule that pp x vpp divides the layers
    std::vector<int> zero_stages = {0, 1, 2, 3};
    bool dropout = false;
    bool linear_bias = false;
    WeightKeeping weights = WeightKeeping::master_and_16bit_copy;
    bool fp8 = true;
    bool ep_overlap = false;     // expert all-to-alls hidden under another micro-batch's compute (DualPipe)
    bool ep_node_dedup = false;  // one copy of a token per destination node (DeepEP)
    bool dcn_sync_overlap = true;  // the cross-slice gradient reduction under the backward (false: after it)
    bool act_fused_into_gemm = false;  // XLA fuses the MLP activation into the down GEMM's operand
    PipelineP2p pipeline_p2p = PipelineP2p::scatter_gather;
    // How context parallelism shares K/V: a ring with one attention call and one fp32 merge per step (Transformer
    // Engine, PyTorch), or one all-gather and one call (MaxText). A scenario's parallel.cp_algorithm wins.
    ParallelPlan::CpAlgorithm cp_algorithm = ParallelPlan::CpAlgorithm::ring;
    // Its dropless MoE experts as one grouped-matmul kernel over M-tiles of this many rows, a tile that straddles a
    // group boundary computed once per group (MaxText's megablox: 512); 0: separate GEMMs per group. See
    // ParallelPlan::gmm_row_tiles; a scenario's training.grouped_gemm_row_tile wins.
    int gmm_row_tile = 0;
    bool zero_grad_all_reduce = false;  // ZeRO-1 gradients all-reduced whole (ParallelPlan's field)
    double grad_accum_bytes_per_param = 0;  // per micro-batch, outside the GEMMs (ParallelPlan's field)
    bool fp8_saved_inputs = false;    // fp8 linear inputs kept for the backward as fp8 (ParallelPlan's field)
    bool activation_offload = false;  // whole layers' saved activations to host memory (ParallelPlan::offload_layers)
    std::map<std::string, std::string> sources;  // behaviour -> citation
};

// Every *.json of `catalog_dir`/software; an unsourced or unknown behaviour is an error naming the file and path.
std::vector<SoftwareStack> load_software_stacks(const std::string& catalog_dir);
// The stack a framework text names: each stack's names matched case-insensitively at word boundaries; the match
// that starts earliest wins, then the longest ("NeMo 24.07 (Megatron-Core)" is NeMo). nullptr when none matches.
const SoftwareStack* find_stack(const std::vector<SoftwareStack>& stacks, const std::string& framework);
// A framework the catalog does not know: every behaviour left to the plan completion's best feasible choice
// (most overlap, flash attention, every ZeRO stage and schedule), as the README documents.
SoftwareStack unknown_stack(const std::string& framework);
// Scenarios that name no framework: podsim's documented defaults (blocking TP collectives, bucketed DP reduction
// and parameter gathers under compute, flash attention, bf16 gradients).
SoftwareStack default_scenario_stack();

// For `podsim list stacks`: each stack's id, description and names, and its behaviours with their values.
std::vector<ChoiceDoc> software_stack_docs(const std::vector<SoftwareStack>& stacks);

// Sets each free behaviour field of `pp` (attention, overlaps) to the stack's value and removes it from the free set;
// grad/param bytes and the weight copy follow the stack's weight keeping unless `keep_bytes`.
void apply_stack_behaviours(const SoftwareStack& stack, PartialPlan& pp, bool keep_bytes = false);

}  // namespace podsim
