// One priced training step: everything a step costs, per pipeline stage and model chunk, before any schedule is
// applied. Both schedulers read it: the event engine lowers it to a task graph (lower_step.hpp), the planner's
// closed form applies the schedule's formula to it (closed_form.hpp), and one summarize() turns either timing
// into the breakdown, MFU and HFU (summarize.hpp). A cost is therefore written once, here.
#pragma once
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hardware/calibration/kernel_profile.hpp"
#include "hardware/system.hpp"
#include "models/memory.hpp"
#include "models/op_cost.hpp"
#include "models/plan.hpp"
#include "models/step_parts.hpp"
#include "models/transformer.hpp"
#include "sim/network_backend.hpp"

namespace podsim {

// Why a plan cannot run, as a class (counted by the planner); the sentences are in StepCosts::reasons.
enum class Reject { none, split, placement, memory };
const char* to_string(Reject r);

// One model chunk of one stage, for one micro-batch.
struct ChunkCosts {
    int layers = 0, moe_layers = 0;
    double fwd_s = 0, fwd_exposed_s = 0;  // forward pass and its collectives not hidden under compute
    double bwd_s = 0, bwd_exposed_s = 0;  // backward (with recomputation)
    // Bucketed gradient sync: issued in `pieces` buckets under the chunk's last backward, which each bucket slows by
    // slowdown_s / pieces (its kernels share SMs and HBM with the backward's).
    double grad_sync_s = 0;
    int pieces = 1;
    double slowdown_s = 0;
};

// What a stage does once per step, after its last backward.
struct StageCosts {
    int layers = 0, moe_layers = 0;
    double params = 0, expert_params = 0;  // before TP/ZeRO sharding
    double flush_sync_s = 0;    // un-bucketed gradient sync after the flush (Megatron's "local" DDP; HSDP over DCN)
    double optimizer_s = 0;
    double param_gather_s = 0;  // ZeRO-1/2 parameter all-gather after the optimizer, when not overlapped
};

// A network group the step uses, for the report.
struct NetworkUse {
    std::string group;      // "tp", "cp", "dp", "pp", "ep"
    int size = 1;
    std::string path;       // "NVLink x8", "ICI 2 axes torus x16 + DCN x2"
    std::string algorithm;  // for the group's main collective
    bool in_one_nvlink_domain = false;  // GPU: every instance of the group sits inside one NVLink domain
};

struct StepCosts {
    Reject reject = Reject::none;         // the first failure's class
    std::vector<std::string> reasons;     // sentences (priced with detail)
    std::vector<std::string> reason_paths;  // the scenario JSON path each reason is about
    bool structural_ok() const { return reject != Reject::split && reject != Reject::placement; }

    Schedule schedule = Schedule::one_f_one_b;
    int pp = 1, vpp = 1;
    long long micro_batches = 0;
    bool dp_sync = false;   // gradients reduced over data parallelism (ZeRO 0-2)
    bool dcn_sync = false;  // ZeRO-3 shards all-reduced across slices (HSDP)
    bool bucketed = false;  // that sync bucketed under the backward (else after the flush)
    double p2p_s = 0;       // one activation hand-off between neighbouring stages
    std::vector<ChunkCosts> chunks;  // pp x vpp; chunk c of stage s at s x vpp + c (model chunk c x pp + s)
    std::vector<StageCosts> stages;  // pp
    const ChunkCosts& chunk(int s, int c) const { return chunks[size_t(s) * vpp + c]; }

    MemoryBreakdown memory;  // the busiest stage

    // For utilization: per step, over the whole system.
    double tokens_per_step = 0;
    double model_flops_per_step = 0, model_flops_causal_per_step = 0;
    double hardware_flops_per_step = 0;  // executed (recomputation included; the mean expert rank)
    double peak_flops_per_s = 0;         // per chip, dense bf16
    double utilization_ceiling = 1;      // the plan precision's peak over bf16's (check_physical)
    int chips = 0;

    // Detail (priced with detail only): for reports.
    std::string efficiency_source;
    std::string peak_name;
    std::vector<NetworkUse> networks;
    std::vector<OpTiming> layer_forward, layer_backward;  // one layer, one micro-batch (backward incl. recompute)
};

struct PricingOptions {
    bool use_profiles = true;                       // hardware/profiles/ efficiencies for the chip
    double matmul_fraction_override = 0;            // > 0: this GEMM efficiency (fitting)
    const calib::KernelProfile* kernels = nullptr;  // measured kernels of the plan's chip (podsim calibrate)
    SimBudget budget;                               // the engine's size rules
};

// Prices plans of one model on one system. Keeps what plans share (group placements, a layer's pass costs per
// layout and layer settings), so that the planner prices hundreds of thousands of plans a second; `out`'s
// buffers are reused. Collectives are timed by `timer`'s backend (analytical: the closed form over the group's
// levels; SimGrid: every instance of the group as flows). Not thread-safe: one pricer per thread.
class StepPricer {
public:
    StepPricer(const ModelSpec& m, const SystemSpec& sys, const CollectiveTimer& timer, PricingOptions opt = {});
    StepPricer(const StepPricer&) = delete;
    StepPricer& operator=(const StepPricer&) = delete;

    // detail: every failure's sentence, the networks used and one layer's op timings; without it, pricing stops
    // at the first failure and makes no strings. A plan over its memory is still priced when detailed (published
    // runs that did run are simulated anyway).
    void price(const ParallelPlan& p, StepCosts& out, bool detail);

    size_t cached_layouts() const { return layouts_.size(); }
    size_t cached_layer_costs() const { return layer_entries_; }

private:
    struct PairHash {
        size_t operator()(const std::pair<uint64_t, uint64_t>& k) const { return k.first * 0x9e3779b97f4a7c15ull ^ k.second; }
    };
    // What a layer's costs depend on in a plan (step_costs.cpp's layer_key): four words.
    struct LayerKey {
        uint64_t w[4] = {0, 0, 0, 0};
        bool operator==(const LayerKey&) const = default;
    };
    struct LayerKeyHash {
        size_t operator()(const LayerKey& k) const {
            return ((k.w[0] * 0x9e3779b97f4a7c15ull ^ k.w[1]) * 0x9e3779b97f4a7c15ull ^ k.w[2]) * 0x9e3779b97f4a7c15ull ^ k.w[3];
        }
    };
    struct LayerEntry {
        PassSums fwd, bwd, emb_f, emb_b, head_f, head_b;
        PassSums moe_fwd, moe_bwd;   // an MoE layer (mixture-of-experts models)
        PassSums chunk_fwd, chunk_bwd;  // once per model chunk and micro-batch (fp8 delayed scaling's amax reduction)
        double chunk_gemms = 0;         // the low-precision GEMMs whose amaxes that reduction carries
        double moe_flops_mean = 0;   // its executed FLOPs on the mean expert rank (no skew)
        double act_bytes = 0;        // one micro-batch's activation (p2p message before the TP split)
    };
    struct LayoutEntry {
        bool placeable = true;
        double compute_scale = 1;      // the slowest of the plan's ranks (models/straggler.hpp)
        bool tp_in_one_domain = true;  // GPU: the TP group sits on one NVLink domain (TP overlap needs it)
        int grad_ranks = 1;            // ranks a gradient is reduced over (dp, or dp x cp on GPUs)
        std::vector<std::pair<std::string, const char*>> why_not;  // placement failures, with their paths
        GroupRef tp, cp, dp, fsdp, dcn, pp, ep, etp, edp;
        GroupNetwork dpnet, fsdpnet, dcnnet, edpnet;
        NetLevel pp_link;  // between neighbouring stages
        std::unordered_map<LayerKey, LayerEntry, LayerKeyHash> layers;
        // TorchTitan's selective recomputation: bytes a dense and an MoE layer keep (memory.hpp's MemoryInputs).
        std::unordered_map<LayerKey, std::pair<double, double>, LayerKeyHash> alternate_saved;
    };
    static LayerKey layer_key(const ParallelPlan& p);
    LayoutEntry& layout(const ParallelPlan& p);
    const LayerEntry& layer(const ParallelPlan& p, LayoutEntry& lay, const CostContext& ctx);
    const ChipSpec& chip_for(const ParallelPlan& p) const { return in_fp8_efficiency_class(p.precision) ? fp8_ : bf16_; }
    // A collective of the step (not of an op): the closed form on the cached network when analytical.
    double collective_s(Collective c, double bytes, const GroupRef& g, const GroupNetwork& net) const;
    // `act_bytes`: one micro-batch's activation (LayerEntry::act_bytes), the TP/CP/EP message sizes.
    void describe_networks(const ParallelPlan& p, const LayoutEntry& lay, double act_bytes, StepCosts& out) const;

    ModelSpec m_;
    SystemSpec sys_;
    const CollectiveTimer& timer_;
    PricingOptions opt_;
    ChipSpec bf16_, fp8_;  // the chip with its resolved GEMM efficiency per precision class
    std::string bf16_source_, fp8_source_;
    double flops_per_token_ = 0, flops_per_token_causal_ = 0;
    double dense_layer_params_ = 0, moe_layer_params_ = 0, routed_params_per_moe_layer_ = 0;
    std::vector<int> moe_prefix_;  // MoE layers before layer i
    std::unordered_map<std::pair<uint64_t, uint64_t>, LayoutEntry, PairHash> layouts_;
    size_t layer_entries_ = 0;
};

// One plan priced with detail, by a fresh pricer.
StepCosts price_step(const ModelSpec& m, const SystemSpec& sys, const ParallelPlan& p, const CollectiveTimer& timer,
                     const PricingOptions& opt = {});

}  // namespace podsim
