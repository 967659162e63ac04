// The planner's closed-form step model: the same op costs, memory model and network closed forms as the
// discrete-event step (step.hpp), with the pipeline schedule, bucketed gradient sync and optimizer tail as
// formulas instead of a task graph. It screens hundreds of thousands of plans a second; the planner re-simulates
// the plans it reports with the engine. Analytical network only; caches what plans share (layouts, layer costs).
#pragma once
#include <array>
#include <cstdint>
#include <vector>
#include <string>
#include <unordered_map>

#include "hardware/system.hpp"
#include "models/op_cost.hpp"
#include "models/plan.hpp"
#include "models/step.hpp"
#include "models/step_parts.hpp"
#include "models/transformer.hpp"
#include "sim/network_backend.hpp"

namespace podsim {

// Why a plan was dropped, as a count key for the planner (the sentence comes from simulate_step).
enum class Reject { none, split, placement, memory };
const char* to_string(Reject r);

struct StepEstimate {
    Reject reject = Reject::none;
    double step_time_s = 0;
    StepBreakdown breakdown;  // on the critical stage, as simulate_step defines it
    double tokens_per_s = 0;
    double mfu = 0, hfu = 0;
    double memory_bytes = 0, hbm_bytes = 0;  // busiest stage
    bool feasible() const { return reject == Reject::none; }
};

class StepEstimator {
public:
    StepEstimator(const ModelSpec& m, const SystemSpec& sys, bool use_profiles = true, SimBudget budget = {});
    StepEstimator(const StepEstimator&) = delete;
    StepEstimator& operator=(const StepEstimator&) = delete;

    StepEstimate estimate(const ParallelPlan& p);
    size_t cached_layouts() const { return layouts_.size(); }
    size_t cached_layer_costs() const { return layer_entries_; }

private:
    SimBudget budget_;  // the engine's size rules, so that screening refuses what confirmation would
    struct LayerEntry {
        PassSums fwd, bwd, emb_f, emb_b, head_f, head_b;
        PassSums moe_fwd, moe_bwd;   // an MoE layer (mixture-of-experts models)
        double moe_flops_mean = 0;   // its executed FLOPs on the mean expert rank (no skew)
        double act_bytes = 0;        // one micro-batch's activation (p2p message before the TP split)
        double layer_act_bytes = 0;  // memory: saved activations per layer and micro-batch
    };
    struct LayoutEntry {
        bool placeable = true;
        GroupRef tp, cp, dp, fsdp, dcn, pp, ep, etp;
        GroupNetwork dpnet, fsdpnet, dcnnet, edpnet;
        double p2p_bytes_per_s = 0, p2p_latency_s = 0;
        std::unordered_map<uint64_t, LayerEntry> layers;
    };
    LayoutEntry& layout(const ParallelPlan& p);
    const LayerEntry& layer(const ParallelPlan& p, LayoutEntry& lay);
    const ChipSpec& chip_for(const ParallelPlan& p) const { return p.precision == Precision::fp8 ? fp8_ : bf16_; }

    // Per-stage work of the plan being estimated (kept to avoid an allocation per plan).
    static constexpr int kMaxChunks = 16;
    struct StageWork {
        double F = 0, B = 0, Fe = 0, Be = 0, slowdown = 0;
        int layers = 0, moe_layers = 0;
        std::array<double, kMaxChunks> chunk_b{}, chunk_sync{};
        std::array<int, kMaxChunks> chunk_pieces{};
    };
    std::vector<StageWork> stages_;
    // 1F1B with fewer micro-batches than stages, played out pass by pass over stages_ (hand-off `t`).
    double one_f_one_b_small(long long micro_batches, double t);
    std::vector<double> f_end_, b_end_, free_at_;  // its scratch
    std::vector<int> next_;

    ModelSpec m_;
    SystemSpec sys_;
    CollectiveTimer timer_;
    ChipSpec bf16_, fp8_;  // the chip with its resolved GEMM efficiency per precision class
    double flops_per_token_ = 0;
    double dense_layer_params_ = 0, moe_layer_params_ = 0, routed_params_per_moe_layer_ = 0;
    struct PairHash {
        size_t operator()(const std::pair<uint64_t, uint64_t>& k) const { return k.first * 0x9e3779b97f4a7c15ull ^ k.second; }
    };
    std::unordered_map<std::pair<uint64_t, uint64_t>, LayoutEntry, PairHash> layouts_;
    std::vector<int> moe_prefix_;  // MoE layers before layer i
    size_t layer_entries_ = 0;
};

}  // namespace podsim
