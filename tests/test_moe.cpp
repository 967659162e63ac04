// Mixture of experts, expert parallelism and long context: parameter counts against the published models, the
// physics of routing (all-to-alls, skew, capacity), memory with EP, context parallelism, and the MoE runs.
#include <cmath>

#include "helpers.hpp"
#include "models/fast_step.hpp"
#include "models/layer_ops.hpp"
#include "models/memory.hpp"
#include "models/plan_space.hpp"
#include "models/published_run.hpp"
#include "models/scenario.hpp"
#include "models/step.hpp"
#include "models/step_parts.hpp"

using namespace podsim;
using podsim::test::approx;

namespace {
Scenario load(const char* name) { return load_scenario(test::scenario(name), test::catalog()); }
std::string describe(const ParallelPlan& p) {
    return "tp " + std::to_string(p.tp) + " pp " + std::to_string(p.pp) + " vpp " + std::to_string(p.vpp) + " dp " +
           std::to_string(p.dp) + " cp " + std::to_string(p.cp) + " ep " + std::to_string(p.ep) + " etp " +
           std::to_string(p.etp) + " mb " + std::to_string(p.micro_batch) + " zero " + std::to_string(p.zero);
}
bool has_op(const std::vector<Op>& ops, const std::string& name) {
    for (const auto& o : ops)
        if (o.name == name) return true;
    return false;
}
}  // namespace

TEST_CASE("total and active parameters of published MoE models") {
    // DeepSeek-V3: 671B total, 37B activated per token (arXiv:2412.19437, abstract; the count excludes the MTP module).
    const ModelSpec ds = load("deepseek-v3-671b-2048xh800.json").model;
    CHECK(ds.total_params() == approx(671e9).epsilon(0.02));
    CHECK(ds.active_params() == approx(37e9).epsilon(0.05));
    // Mixtral 8x22B: 141B total, 39B active (Mistral AI, mistral.ai/news/mixtral-8x22b).
    const ModelSpec mx = load("mixtral-8x22b-32xa3-mega.json").model;
    CHECK(mx.total_params() == approx(141e9).epsilon(0.02));
    CHECK(mx.active_params() == approx(39e9).epsilon(0.03));
    // MFU counts active parameters: a top-2-of-8 model costs far less per token than its total size suggests.
    CHECK(model_flops_per_token(mx) < 0.4 * 6 * mx.total_params());
    CHECK(model_flops_per_token(mx) > 6 * (mx.active_params() - mx.embedding_params()));
}

TEST_CASE("an MoE layer routes, dispatches over the EP group, runs grouped expert GEMMs and combines") {
    const Scenario s = load("mixtral-8x22b-32xa3-mega.json");
    const LayerOps L = layer_ops(s.model, s.plan, true);
    for (const char* op : {"moe.router", "ep.dispatch", "moe.experts.up", "moe.experts.down", "ep.combine"}) {
        CAPTURE(op);
        CHECK(has_op(L.forward, op));
    }
    ParallelPlan one = s.plan;
    one.ep = 1;
    const LayerOps L1 = layer_ops(s.model, one, true);
    CHECK(!has_op(L1.forward, "ep.dispatch"));  // no expert parallelism: nothing to exchange
    // Top-2 of 8: each expert rank computes 2 x its tokens' share; the routed FLOPs equal a dense MLP of k experts.
    double routed = 0;
    for (const auto& o : L1.forward)
        if (o.name.rfind("moe.experts.", 0) == 0) routed += o.flops;
    ParallelPlan flat = one;
    ModelSpec even = s.model;
    even.moe.load_imbalance = 1;
    double routed_even = 0;
    for (const auto& o : layer_ops(even, flat, true).forward)
        if (o.name.rfind("moe.experts.", 0) == 0) routed_even += o.flops;
    const double T = double(s.plan.micro_batch) * s.model.seq_len;
    CHECK(routed_even == approx(2.0 * T * 2 * 3 * s.model.hidden * s.model.moe.expert_ffn_hidden / s.plan.tp).epsilon(1e-9));
    CHECK(routed == approx(routed_even * s.model.moe.load_imbalance).epsilon(1e-9));
}

TEST_CASE("routing skew slows the step; a capacity factor caps it and drops tokens instead") {
    Scenario s = load("mixtral-8x22b-32xa3-mega.json");
    s.plan.recompute = Recompute::full;  // room in memory for the skewed experts' activations
    s.model.moe.load_imbalance = 1;
    const double even = simulate_step(s.model, s.system, s.plan).step_time_s;
    s.model.moe.load_imbalance = 1.5;
    const double skewed = simulate_step(s.model, s.system, s.plan).step_time_s;
    CHECK(skewed > even * 1.05);
    s.model.moe.capacity_factor = 1.25;
    const double capped = simulate_step(s.model, s.system, s.plan).step_time_s;
    CHECK(capped < skewed);
    CHECK(capped > even);
    const MoeLoad load = moe_load(s.model, s.plan);
    CHECK(load.dropped_fraction > 0);
}

TEST_CASE("a node-deduplicating dispatcher sends one copy per destination node over the network") {
    Scenario s = load("deepseek-v3-671b-2048xh800.json");
    s.model.moe.nodes_per_token = 0;  // DeepEP without DeepSeek's routing limit
    s.plan.ep_overlap = false;
    auto a2a_s = [&](bool dedup) {
        ParallelPlan p = s.plan;
        p.ep_node_dedup = dedup;
        const StepResult r = simulate_step(s.model, s.system, p);
        for (const auto& o : r.layer_forward)
            if (o.name == "ep.combine") return o.time_s;
        return 0.0;
    };
    const double plain = a2a_s(false), dedup = a2a_s(true);
    REQUIRE(plain > 0);
    // Top-8 over the 8 nodes of EP64: 7 of 8 copies remote without dedup; 7 (1 - (7/8)^8) = 4.59 distinct remote
    // nodes with it. The NIC is the bottleneck in both.
    CHECK(dedup / plain == approx(4.59 / 7).epsilon(0.05));
    s.model.moe.nodes_per_token = 4;  // DeepSeek-V3's limit
    CHECK(a2a_s(true) < dedup);
}

TEST_CASE("expert parallelism shards the experts' weights and states; more EP, less memory") {
    Scenario s = load("mixtral-8x22b-32xa3-mega.json");
    s.plan.ep = 2;
    const double ep2 = simulate_step(s.model, s.system, s.plan).memory.total_bytes;
    s.plan.ep = 8;
    const double ep8 = simulate_step(s.model, s.system, s.plan).memory.total_bytes;
    CHECK(ep8 < ep2);
    // Impossible expert splits are reported with the reason.
    s.plan.ep = 3;
    const StepResult bad = simulate_step(s.model, s.system, s.plan);
    CHECK(!bad.feasible);
    CHECK(bad.infeasible.front().find("does not divide the 8 experts") != std::string::npos);
}

TEST_CASE("context parallelism: activations per device shrink with CP; KV all-gather is exposed, the ring hidden") {
    Scenario s = load("llama3-70b-128k-cp-64xa3-mega.json");
    ParallelPlan p = s.plan;
    p.recompute = Recompute::selective;
    const double cp16 = layer_activation_bytes(s.model, p);
    p.cp = 8;
    const double cp8 = layer_activation_bytes(s.model, p);
    CHECK(cp8 == approx(2 * cp16).epsilon(0.01));
    const StepResult ring = simulate_step(s.model, s.system, s.plan);
    ParallelPlan ag = s.plan;
    ag.cp_algorithm = ParallelPlan::CpAlgorithm::all_gather;
    const StepResult gathered = simulate_step(s.model, s.system, ag);
    REQUIRE(ring.feasible);
    REQUIRE(gathered.feasible);
    CHECK(gathered.breakdown.exposed_comm_s > ring.breakdown.exposed_comm_s);
    CHECK(gathered.memory.transient_bytes > ring.memory.transient_bytes);
    // At 128K the attention FLOPs dominate: counting the causal half only lowers MFU a lot; at 2K it hardly moves.
    CHECK(ring.mfu_causal < 0.75 * ring.mfu);
    const Scenario gpt = load("gpt3-175b-128xa3-mega.json");
    const StepResult short_ctx = simulate_step(gpt.model, gpt.system, gpt.plan);
    CHECK(short_ctx.mfu_causal > 0.9 * short_ctx.mfu);
    CHECK(short_ctx.mfu_causal < short_ctx.mfu);
}

TEST_CASE("ring context parallelism: one attention call per step, partial outputs merged, gradients accumulated") {
    const ModelSpec m = test::llama3_8b();  // 32 heads x 128, 8 KV heads, seq 8192
    ParallelPlan p;
    p.dp = 2, p.cp = 4, p.micro_batch = 1, p.global_batch = 8;
    p.attention = AttentionKernel::flash;
    const LayerOps L = layer_ops(m, p);
    auto find = [](const std::vector<Op>& ops, const char* name) -> const Op* {
        for (const auto& o : ops)
            if (o.name == name) return &o;
        return nullptr;
    };
    const double T = 8192.0 / 4, out_elems = T * 32 * 128, kv_elems = T * 2 * 8 * 128;
    const Op* merge = find(L.forward, "cp.out_merge");
    const Op* accumulate = find(L.backward, "cp.grad_accumulate");
    REQUIRE(merge != nullptr);
    REQUIRE(accumulate != nullptr);
    // Per step: the step's 16-bit output read, the fp32 sum read and written; at the end the sum cast to 16-bit.
    CHECK(merge->bytes == approx(4 * out_elems * (2 + 4 + 4) + out_elems * (4 + 2)));
    // Per step: dQ and the travelling dK/dV each read-added-written in 16-bit.
    CHECK(accumulate->bytes == approx(4 * (out_elems + kv_elems) * 3 * 2));
    CHECK(find(L.forward, "flash_attention")->kernels == 4);
    CHECK(find(L.backward, "flash_attention.bwd")->kernels == 4);
    // Full recomputation reruns the merges with the attention calls.
    ParallelPlan full = p;
    full.recompute = Recompute::full;
    CHECK(find(layer_ops(m, full).recompute, "cp.out_merge") != nullptr);
    // A policy that keeps the attention's output does not merge again: MaxText's names keeping the context, and
    // TorchTitan's per-op policy, which saves the flash kernel's output.
    ParallelPlan named = p;
    named.recompute = Recompute::names;
    named.remat.device |= 1u << unsigned(RematTensor::context);
    CHECK(find(layer_ops(m, named).recompute, "cp.out_merge") == nullptr);
    named.remat = RematNames{};  // the layer input alone
    CHECK(find(layer_ops(m, named).recompute, "cp.out_merge") != nullptr);
    ParallelPlan per_op = p;
    per_op.recompute = Recompute::selective, per_op.selective = SelectiveRecompute::alternate_matmuls;
    CHECK(find(layer_ops(m, per_op).recompute, "cp.out_merge") == nullptr);
    CHECK(find(layer_ops(m, per_op).recompute, "rope") != nullptr);  // the policy's other elementwise ops rerun
    // The all-gather algorithm runs one attention call over the gathered keys: nothing to merge.
    ParallelPlan ag = p;
    ag.cp_algorithm = ParallelPlan::CpAlgorithm::all_gather;
    const LayerOps G = layer_ops(m, ag);
    CHECK(find(G.forward, "cp.out_merge") == nullptr);
    CHECK(find(G.backward, "cp.grad_accumulate") == nullptr);
    CHECK(find(G.forward, "flash_attention")->kernels == 1);
}

TEST_CASE("the closed form agrees with the engine on MoE plans, and the search explores EP and CP") {
    for (const char* name : {"mixtral-8x22b-32xa3-mega.json", "deepseek-v3-671b-2048xh800.json"}) {
        CAPTURE(name);
        const Scenario s = load(name);
        const PlanSpace space = default_plan_space(s.model, s.system, s.plan);
        CHECK(space.ep.size() > 1);
        CHECK(space.cp.size() > 1);
        StepEstimator est(s.model, s.system);
        std::vector<ParallelPlan> fit;
        for_each_plan(s.system, s.plan, space, [&](const ParallelPlan& p) {
            if (est.estimate(p).feasible()) fit.push_back(p);
        });
        REQUIRE(fit.size() > 20);
        double worst = 0;
        int ep_plans = 0;
        const size_t stride = std::max<size_t>(1, fit.size() / 25);
        for (size_t i = 0; i < fit.size(); i += stride) {
            const StepResult r = simulate_step(s.model, s.system, fit[i]);
            CAPTURE(describe(fit[i]));
            CAPTURE(r.infeasible.empty() ? std::string() : r.infeasible.front());
            REQUIRE(r.feasible);
            worst = std::max(worst, std::fabs(est.estimate(fit[i]).step_time_s / r.step_time_s - 1));
            ep_plans += fit[i].ep > 1;
        }
        MESSAGE(std::string(name) << ": " << fit.size() << " plans fit, worst closed-form error " << 100 * worst << "%");
        CHECK(worst < 0.03);
        CHECK(ep_plans > 0);
    }
}

TEST_CASE("MoE published runs: DeepSeek-V3's reported GPU-hours and NeMo AutoModel H100 step times") {
    const auto runs = load_published_runs(test::scenario("validation/moe_runs.json"), test::catalog());
    REQUIRE(runs.size() == 5);
    double sum = 0, worst = 0;
    for (const auto& run : runs) {
        const PublishedPrediction p = simulate_published(run, StepOptions{});
        const double err = p.step.step_time_s / run.published_step_time_s - 1;
        MESSAGE(run.id << ": published " << run.published_step_time_s << " s, predicted " << p.step.step_time_s
                       << " s (" << 100 * err << "%)");
        sum += std::fabs(err);
        worst = std::max(worst, std::fabs(err));
        if (run.id == "deepseek-v3-report-2048xh800") CHECK(std::fabs(err) < 0.10);
    }
    CHECK(sum / runs.size() < 0.15);
    CHECK(worst < 0.30);
}
