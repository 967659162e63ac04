// The strategies the planner considers for a model on a system: every data / tensor / pipeline / context split of
// the chips, virtual stages, ZeRO stage, sequence parallelism, micro-batch, recomputation and precision that the
// model's shapes allow. The scenario's plan supplies the rest (global batch, framework behaviour).
#pragma once
#include <functional>
#include <vector>

#include "hardware/system.hpp"
#include "models/plan.hpp"
#include "models/transformer.hpp"

namespace podsim {

struct PlanSpace {
    std::vector<int> tp, cp, pp, vpp, zero;
    std::vector<int> ep = {1};        // expert parallel degrees (MoE models: divisors of the expert count)
    bool try_expert_tp = false;       // MoE: experts TP-split like the rest (etp = tp) as well as whole (etp = 1)
    std::vector<long long> micro_batch;
    std::vector<Recompute> recompute;
    std::vector<Precision> precision;
    // Layers offloaded to host memory, tried only where offload is allowed (pp 1, no recomputation); {0}: never.
    std::vector<int> offload_layers = {0};
    bool try_sp = true;  // with and without sequence parallelism where tp > 1
    int sp_only = -1;    // 0 or 1: sequence parallelism pinned off / on (where tp > 1); -1: as try_sp says
    int dp_only = 0;     // > 0: only splits with this data-parallel degree (a plan that states dp)
    bool zero_with_pipeline = false;  // admit ZeRO-2/3 with pp > 1 (a plan that states both: FSDP2 + pipelining)
    // GPU: a TP group beyond one NVLink domain gets no TP communication overlap (Transformer Engine's userbuffers
    // need the group on one NVSwitch fabric); false where the plan states its overlap (taken as stated, and then
    // rejected by the pricer with the reason if the TP group crosses domains).
    bool tp_overlap_only_in_domain = true;
    int layers = 0;      // > 0: at most this many model chunks (each holds a layer) and, unless uneven_chunks,
                         // virtual stages divide the layers per stage evenly (Megatron-LM's rule)
    bool uneven_chunks = false;
};

// What a user pins (issue #14: `search --tp 1,2,4,8 --precision bf16 ...`, a sweep's or report's same flags): each
// list, where given, keeps only those values of the space; tp_in_nvlink_domain keeps TP inside one NVLink domain
// (GPU systems: TP that divides the domain's GPUs, so every TP group lands in one domain).
struct PlanConstraints {
    std::vector<int> tp, pp, cp, ep, zero, vpp;
    std::vector<long long> micro_batch;
    std::vector<Precision> precision;
    std::vector<Recompute> recompute;
    bool tp_in_nvlink_domain = false;
    bool any() const {
        return !tp.empty() || !pp.empty() || !cp.empty() || !ep.empty() || !zero.empty() || !vpp.empty() ||
               !micro_batch.empty() || !precision.empty() || !recompute.empty() || tp_in_nvlink_domain;
    }
};
// Narrows `space` to the constraints on `sys`. Returns "" or, when a dimension is left empty, which one and what
// the model allowed there (the search then has no plan, and says why).
std::string constrain(PlanSpace& space, const PlanConstraints& c, const SystemSpec& sys);

// Every value the model admits: tp dividing heads and ffn (and fitting the KV heads), cp dividing the sequence
// down to 512-token blocks, pp up to the layer count, vpp up to 16 dividing the layers per stage, ZeRO 0-3, power-of-
// two micro-batches up to 32, all recomputation modes, the scenario's precision and fp8 where the chip has it,
// activation offload of 1/8 ... 7/8 of the layers where the system has a host link in the catalog; for a mixture of
// experts, ep dividing the experts and expert TP of 1 or tp.
PlanSpace default_plan_space(const ModelSpec& m, const SystemSpec& sys, const ParallelPlan& base);

// Calls `visit` for each plan of the space whose split uses exactly the system's chips and whose batch divides
// (dp x micro-batch divides the global batch; interleaving has a micro-batch count divisible by pp; ZeRO-2/3 only
// without pipelining; activation offload only with pp 1 and no recomputation). Returns how many it visited.
size_t for_each_plan(const SystemSpec& sys, const ParallelPlan& base, const PlanSpace& space,
                     const std::function<void(const ParallelPlan&)>& visit);

}  // namespace podsim
