// Memory mechanisms of Megatron-Core / Transformer Engine stacks (issue 12): whole layers' saved activations
// offloaded to host memory (cpu_offloading_num_layers), and fp8 plans keeping linear inputs for the backward as
// their fp8 copies. Each value below is derived from the memory formula's terms or the priced passes, so that each
// check can fail on its own.
#include <doctest/doctest.h>

#include <algorithm>

#include "hardware/node.hpp"
#include "models/fast_step.hpp"
#include "models/memory.hpp"
#include "models/plan_completion.hpp"
#include "models/software_stack.hpp"
#include "models/step.hpp"
#include "models/step_costs.hpp"
#include "reports/provision.hpp"
#include "tests/helpers.hpp"

using namespace podsim;
using podsim::test::approx;

namespace {

// A Llama-3-70B-like dense model (GQA, SwiGLU) with a negligible vocabulary.
ModelSpec model() {
    ModelSpec m;
    m.name = "dense-70b-like";
    m.layers = 80, m.hidden = 8192, m.ffn_hidden = 28672, m.heads = 64, m.kv_heads = 8, m.head_dim = 128;
    m.vocab = 128, m.seq_len = 8192;
    m.activation = Activation::swiglu, m.position = Position::rope, m.dropout = false;
    return m;
}

// 64 GB200 GPUs (16 trays of an NVL72 rack), FSDP over all of them, micro-batch 2, fp8 as Transformer Engine runs it.
const SystemSpec& gb200() {
    static const SystemSpec sys = test::catalog().gpu_system("gb200-nvl72", 16, "t", "$");
    return sys;
}

ParallelPlan plan(int offload_layers) {
    ParallelPlan p;
    p.dp = 64, p.zero = 3, p.micro_batch = 2, p.global_batch = 256;
    p.precision = Precision::fp8, p.fp8_saved_inputs = true;
    p.offload_layers = offload_layers;
    return p;
}

StepCosts priced(const SystemSpec& sys, const ParallelPlan& p) {
    const CollectiveTimer timer(sys, NetworkBackend::analytical);
    PricingOptions opt;
    return price_step(model(), sys, p, timer, opt);
}

}  // namespace

TEST_CASE("activation offload: the offloaded layers' sets leave HBM for host memory, one stays as the buffer") {
    const double per_layer = layer_activation_bytes(model(), plan(0));
    const StepCosts none = priced(gb200(), plan(0));
    const StepCosts some = priced(gb200(), plan(40));
    // Without pipelining every layer's set of the one micro-batch in flight is held: 80 sets, then 80 - 40 + 1.
    CHECK(none.memory.activations_bytes == approx(80 * per_layer));
    CHECK(some.memory.activations_bytes == approx(41 * per_layer));
    CHECK(some.memory.host_offload_bytes == approx(40 * per_layer));
    CHECK(none.memory.host_offload_bytes == 0);
    // The host holds 960 GB per tray of 4 GPUs.
    CHECK(some.memory.host_bytes == approx(960e9 / 4));
    // Nothing else moves.
    CHECK(some.memory.weights_bytes == none.memory.weights_bytes);
    CHECK(some.memory.total_bytes - none.memory.total_bytes == approx(-39 * per_layer));
}

TEST_CASE("activation offload: what a layer's pass cannot hide of its copy is waited for, per offloaded layer") {
    const StepCosts base = priced(gb200(), plan(0));
    const StepCosts one = priced(gb200(), plan(1));
    const StepCosts ten = priced(gb200(), plan(10));
    const double d_fwd = one.chunk(0, 0).fwd_s - base.chunk(0, 0).fwd_s;
    const double d_bwd = one.chunk(0, 0).bwd_s - base.chunk(0, 0).bwd_s;
    // The copy of one layer's set at 80% of the link's one-way rate, less the pass that hides it.
    const double copy_s = layer_activation_bytes(model(), plan(0)) / (0.8 * gb200().node.host_link_bytes_per_s);
    const double layer_fwd_s = base.chunk(0, 0).fwd_s / 80;  // the embedding and head are negligible here
    CHECK(d_fwd == doctest::Approx(std::max(0.0, copy_s - layer_fwd_s)).epsilon(0.02));
    CHECK(d_fwd > 0);  // on GB200's share of NVLink-C2C the forward cannot hide it
    CHECK(d_bwd >= 0);
    CHECK(d_bwd < d_fwd);  // the backward is about twice as long
    // Linear in the layer count, and counted as waiting (exposed), not compute.
    CHECK(ten.chunk(0, 0).fwd_s - base.chunk(0, 0).fwd_s == approx(10 * d_fwd));
    CHECK(ten.chunk(0, 0).fwd_exposed_s - base.chunk(0, 0).fwd_exposed_s == approx(10 * d_fwd));
    // A host link 100x faster hides every copy.
    SystemSpec fast = gb200();
    fast.node.host_link_bytes_per_s *= 100;
    const StepCosts hidden = priced(fast, plan(10));
    CHECK(hidden.chunk(0, 0).fwd_s == approx(base.chunk(0, 0).fwd_s));
    CHECK(hidden.chunk(0, 0).bwd_s == approx(base.chunk(0, 0).bwd_s));
    // The engine and the planner's closed form read the same priced passes.
    const StepResult r = simulate_step(model(), gb200(), plan(60));  // 60 layers: the plan fits
    REQUIRE(r.feasible);
    StepEstimator est(model(), gb200());
    const StepEstimate e = est.estimate(plan(60));
    REQUIRE(e.feasible());
    CHECK(e.step_time_s == doctest::Approx(r.step_time_s).epsilon(0.01));
}

TEST_CASE("activation offload: Megatron-Core's rules and a host to offload to") {
    auto reasons = [](const SystemSpec& sys, const ParallelPlan& p) {
        std::string all;
        for (const auto& r : priced(sys, p).reasons) all += r + "\n";
        return all;
    };
    ParallelPlan p = plan(80);
    CHECK(reasons(gb200(), p).find("fewer than the model's 80 layers") != std::string::npos);
    p = plan(10), p.recompute = Recompute::full;
    CHECK(reasons(gb200(), p).find("does not work with activation recomputation") != std::string::npos);
    p = plan(10), p.dp = 16, p.pp = 4, p.zero = 1;
    CHECK(reasons(gb200(), p).find("no CPU offloading with pipeline parallelism") != std::string::npos);
    // DGX A100 has no host figures in the catalog: nothing to offload to.
    const SystemSpec a100 = test::catalog().gpu_system("dgx-a100", 8, "t", "$");
    CHECK(a100.node.host_link_bytes_per_s == 0);
    CHECK(reasons(a100, plan(10)).find("no host memory and CPU link") != std::string::npos);
    // A host too small for what is offloaded: the plan does not fit, and the reason says where.
    SystemSpec small = gb200();
    small.node.host_memory_bytes = 4 * 10e9;  // 10 GB per GPU
    REQUIRE(priced(gb200(), plan(60)).memory.fits);
    const StepCosts c = priced(small, plan(60));
    CHECK(c.reject == Reject::memory);
    CHECK(reasons(small, plan(60)).find("to host memory, which has 9.31 GiB per device") != std::string::npos);
}

TEST_CASE("activation offload: a free offload completes to the fewest layers that fit, where the stack has it") {
    PartialPlan partial{plan(0), {}};
    partial.free.add(PlanField::offload_layers);
    const SoftwareStack nemo = [] {
        for (const auto& s : load_software_stacks(default_catalog_dir()))
            if (s.id == "nemo") return s;
        FAIL("nemo stack missing");
        return SoftwareStack{};
    }();
    REQUIRE(nemo.activation_offload);
    REQUIRE_FALSE(priced(gb200(), plan(0)).memory.fits);  // 80 layers' activations exceed 186 GB
    const PlanCompletion c = complete_plan(model(), gb200(), partial, nemo, {});
    REQUIRE(c.found);
    const int k = c.plan.offload_layers;
    CHECK(k > 0);
    CHECK(priced(gb200(), plan(k)).memory.fits);
    CHECK_FALSE(priced(gb200(), plan(k - 1)).memory.fits);
    CHECK(std::find(c.chosen.begin(), c.chosen.end(), "training.offload_layers = " + std::to_string(k)) !=
          c.chosen.end());
    // TorchTitan offloads no activations: the completion cannot use it (nothing fits without recomputation).
    SoftwareStack titan = nemo;
    titan.activation_offload = false;
    CHECK_FALSE(complete_plan(model(), gb200(), partial, titan, {}).found);
    // With recomputation stated, offload is no choice and is not reported.
    PartialPlan full = partial;
    full.plan.recompute = Recompute::full;
    const PlanCompletion cf = complete_plan(model(), gb200(), full, nemo, {});
    CHECK(cf.plan.offload_layers == 0);
    CHECK(cf.chosen.empty());
}

TEST_CASE("activation offload: Megatron-LM arguments carry it; MaxText cannot run it") {
    const ParallelPlan p = plan(40);
    const FrameworkSettings mg = megatron_settings(gb200(), model(), p);
    REQUIRE(mg.find("--cpu-offloading-num-layers") != nullptr);
    CHECK(*mg.find("--cpu-offloading-num-layers") == "40");
    CHECK(mg.find("--cpu-offloading") != nullptr);
    CHECK(mg.find("--recompute-granularity") == nullptr);
    const FrameworkSettings mt = maxtext_settings(gb200(), model(), p);
    CHECK(std::any_of(mt.blockers.begin(), mt.blockers.end(),
                      [](const std::string& b) { return b.find("offloads 40 layers") != std::string::npos; }));
    CHECK(megatron_settings(gb200(), model(), plan(0)).find("--cpu-offloading") == nullptr);
}

TEST_CASE("fp8 saved inputs: the norms' and the activation's outputs kept as fp8, the attention output in both") {
    // Per token position, tp 1 and no sequence parallelism: the two norm outputs (h each) and the activation's
    // output (ffn) drop from 2 bytes to 1; the attention output (heads x head_dim) gains its 1-byte fp8 copy.
    const ModelSpec m = model();
    ParallelPlan te = plan(0), hp = plan(0);
    hp.fp8_saved_inputs = false;
    const double tokens = 2.0 * m.seq_len;
    const double per_token = 2.0 * m.hidden + m.ffn_hidden - double(m.heads) * m.head_dim;
    CHECK(layer_activation_bytes(m, hp) - layer_activation_bytes(m, te) == approx(tokens * per_token));
    // A 16-bit plan saves 16-bit tensors whatever the stack.
    te.precision = hp.precision = Precision::bf16;
    CHECK(layer_activation_bytes(m, te) == layer_activation_bytes(m, hp));
    // Full recomputation keeps only the layer input: unchanged.
    te.precision = hp.precision = Precision::fp8;
    te.recompute = hp.recompute = Recompute::full;
    CHECK(layer_activation_bytes(m, te) == layer_activation_bytes(m, hp));
}

TEST_CASE("system catalog: host memory and host link go together") {
    Json j = load_json_file(default_catalog_dir() + "/systems/gb200-nvl72.json");
    REQUIRE(j.contains("host_link_bytes_per_s"));
    CHECK(node_from_json(JsonObject(j, "gb200-nvl72.json", "$")).host_link_bytes_per_s == 225e9);
    j.erase("host_link_bytes_per_s");
    std::string err;
    try {
        node_from_json(JsonObject(j, "gb200-nvl72.json", "$"));
    } catch (const InputError& e) {
        err = e.what();
    }
    CHECK(err.find("$.host_link_bytes_per_s") != std::string::npos);
    CHECK(err.find("go together") != std::string::npos);
}

TEST_CASE("activation offload: a free offload that cannot be chosen is settled, so a stated plan is not completed") {
    const auto stacks = load_software_stacks(default_catalog_dir());
    const SoftwareStack* nemo = find_stack(stacks, "NeMo");
    const SoftwareStack* titan = find_stack(stacks, "TorchTitan");
    REQUIRE(nemo != nullptr);
    REQUIRE(titan != nullptr);
    PartialPlan partial{plan(0), {}};
    partial.free.add(PlanField::offload_layers);
    PartialPlan a = partial;
    CHECK(settle_offload(a, gb200(), *nemo).empty());
    CHECK(a.free.has(PlanField::offload_layers));  // a choice: stays free
    PartialPlan b = partial;
    CHECK(settle_offload(b, gb200(), *titan).empty());
    CHECK_FALSE(b.free.any_structural());  // TorchTitan has no offload: settled to none
    PartialPlan c = partial;
    c.plan.recompute = Recompute::selective;  // stated recomputation excludes it
    settle_offload(c, gb200(), *nemo);
    CHECK_FALSE(c.free.has(PlanField::offload_layers));
    // A stated offload the framework does not have is an input error's reason.
    PartialPlan d{plan(10), {}};
    CHECK(settle_offload(d, gb200(), *titan).find("does not offload activations") != std::string::npos);
    CHECK(settle_offload(d, gb200(), *nemo).empty());
    // A plan stated in full keeps its schedule through a completion of other fields (GPipe stays GPipe).
    PartialPlan g{plan(0), {}};
    g.plan.schedule = Schedule::gpipe;
    g.free.add(PlanField::offload_layers);
    const PlanCompletion cg = complete_plan(model(), gb200(), g, *nemo, {});
    CHECK(cg.plan.schedule == Schedule::gpipe);
}
