// Software-stack behaviours that are mechanisms of the step (issue 12, software stacks as data), each checked
// against the priced step's own collective times so that every check can fail on its own:
// - how a pipeline stage hands its boundary tensor to the next: Megatron-LM scatters it over the TP ranks and sends
//   on a side stream; DeepSpeed's PipelineEngine sends the whole tensor from every TP rank with blocking send/recv
//   between the passes;
// - how ZeRO-1 reduces gradients: a reduce-scatter to the shard owners (Megatron's distributed optimizer), or a whole
//   all-reduce (DeepSpeed's bf16 pipeline path).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "models/closed_form.hpp"
#include "models/fast_step.hpp"
#include "models/layer_ops.hpp"
#include "models/op_cost.hpp"
#include "models/plan_completion.hpp"
#include "models/scenario.hpp"
#include "models/software_stack.hpp"
#include "models/step.hpp"
#include "models/step_costs.hpp"
#include "tests/helpers.hpp"

using namespace podsim;
using podsim::test::approx;

namespace {

ModelSpec uniform_model() {
    ModelSpec m;
    m.name = "uniform";
    m.layers = 16, m.hidden = 8192, m.ffn_hidden = 32768, m.heads = 64, m.kv_heads = 64, m.head_dim = 128;
    m.vocab = 128, m.seq_len = 2048;  // negligible embedding and logits
    m.position = Position::rope, m.dropout = false;
    return m;
}

// TP 8 inside a DGX A100, 4 stages across nodes over InfiniBand, 16 micro-batches.
ParallelPlan plan(PipelineP2p how) {
    ParallelPlan p;
    p.tp = 8, p.pp = 4, p.dp = 1, p.micro_batch = 1, p.global_batch = 16;
    p.pp_p2p = how;
    return p;
}

const SystemSpec& four_nodes() {
    static const SystemSpec sys = test::catalog().gpu_system("dgx-a100", 4, "t", "$");
    return sys;
}

StepCosts priced(const ParallelPlan& p) {
    const CollectiveTimer timer(four_nodes(), NetworkBackend::analytical);
    return price_step(uniform_model(), four_nodes(), p, timer);
}

// The op of that name in a pass (a copy: the layer's op lists are temporaries in these tests).
Op find(const std::vector<Op>& ops, const std::string& name) {
    for (const Op& o : ops)
        if (o.name == name) return o;
    FAIL("no " << name);
    return Op{};
}

// A grouped GEMM's time over the same GEMM priced dense (no groups: no shared tiles, the op's own dimensions).
double over_dense(const Op& o, const ChipSpec& chip, const ParallelPlan& p) {
    CostContext c;
    c.chip = &chip;
    c.plan = &p;
    Op dense = o;
    dense.groups = 0;
    return op_time_s(o, c) / op_time_s(dense, c);
}

}  // namespace

TEST_CASE("pipeline p2p: scattered over TP on a side stream, or whole and blocking the passes (DeepSpeed)") {
    const StepCosts scattered = priced(plan(PipelineP2p::scatter_gather));
    const StepCosts whole = priced(plan(PipelineP2p::sequence_shard));  // no sequence parallelism: the whole tensor
    const StepCosts blocking = priced(plan(PipelineP2p::full_blocking));
    REQUIRE(scattered.p2p_s > 0);
    // 8x the bytes over the same InfiniBand link: 8x the time less the latency the two share.
    CHECK(whole.p2p_s / scattered.p2p_s > 7);
    CHECK(whole.p2p_s / scattered.p2p_s < 8.001);

    // Blocking: the transfers join the passes (in from the stage below, out to the stage above), no side-stream hop.
    CHECK(blocking.p2p_s == 0);
    const double t = whole.p2p_s;
    for (int s = 0; s < 4; ++s) {
        const double hops = (s > 0) + (s < 3);
        CAPTURE(s);
        CHECK(blocking.chunk(s, 0).fwd_s - scattered.chunk(s, 0).fwd_s == approx(hops * t));
        CHECK(blocking.chunk(s, 0).bwd_s - scattered.chunk(s, 0).bwd_s == approx(hops * t));
        CHECK(blocking.chunk(s, 0).fwd_exposed_s - scattered.chunk(s, 0).fwd_exposed_s == approx(hops * t));
    }

    // The step: a middle stage pays 4 transfers per micro-batch in the steady state, all 16 of them in sequence.
    const StepResult a = simulate_step(uniform_model(), four_nodes(), plan(PipelineP2p::scatter_gather));
    const StepResult b = simulate_step(uniform_model(), four_nodes(), plan(PipelineP2p::full_blocking));
    REQUIRE(a.feasible);
    REQUIRE(b.feasible);
    CHECK(b.step_time_s - a.step_time_s > 16 * 4 * t * 0.95);
    // The planner's closed form reads the same priced step: it agrees with the engine on the blocking plan.
    StepEstimator est(uniform_model(), four_nodes());
    const StepEstimate e = est.estimate(plan(PipelineP2p::full_blocking));
    REQUIRE(e.feasible());
    CHECK(e.step_time_s == approx(b.step_time_s).epsilon(0.01));

    // With sequence parallelism the boundary tensor is already split over the TP ranks: Megatron-Core's hand-off
    // moves what Megatron-LM's scatter/gather moves.
    ParallelPlan sp_shard = plan(PipelineP2p::sequence_shard), sp_scatter = plan(PipelineP2p::scatter_gather);
    sp_shard.sp = sp_scatter.sp = true;
    CHECK(priced(sp_shard).p2p_s == approx(priced(sp_scatter).p2p_s));

    // DeepSpeed's engine has no interleaved schedule: a blocking hand-off with model chunks is refused, with a reason.
    ParallelPlan chunks = plan(PipelineP2p::full_blocking);
    chunks.vpp = 2, chunks.schedule = Schedule::interleaved;
    const StepResult r = simulate_step(uniform_model(), four_nodes(), chunks);
    CHECK_FALSE(r.feasible);
    REQUIRE(!r.infeasible.empty());
    CHECK(r.infeasible[0].find("no interleaved schedule") != std::string::npos);
}

TEST_CASE("pipeline p2p is a catalog behaviour: DeepSpeed's stacks block, Megatron-LM scatters; a bad value names "
          "its path") {
    auto stack = [](const std::string& name) { return test::shipped_stack(name); };
    CHECK(stack("Megatron-DeepSpeed").pipeline_p2p == PipelineP2p::full_blocking);
    CHECK_FALSE(stack("Megatron-DeepSpeed").param_gather_overlap);  // ZeRO-1's gather ends the optimizer step
    CHECK(stack("Megatron-LM (2021)").pipeline_p2p == PipelineP2p::scatter_gather);
    CHECK(stack("NeMo 24.07").pipeline_p2p == PipelineP2p::sequence_shard);
    PartialPlan pp;
    pp.plan = plan(PipelineP2p::scatter_gather);
    apply_stack_behaviours(stack("Megatron-DeepSpeed"), pp);
    CHECK(pp.plan.pp_p2p == PipelineP2p::full_blocking);

    const std::string err =
        test::stack_catalog_error("bad-p2p", [](Json& s) { s["behaviours"]["pipeline_p2p"]["value"] = "pigeon"; });
    CHECK(err.find("$.behaviours.pipeline_p2p.value") != std::string::npos);
}

TEST_CASE("ZeRO-1 gradients: reduce-scattered to their owners, or all-reduced whole (DeepSpeed's bf16 pipeline path)") {
    ParallelPlan p;
    p.tp = 8, p.pp = 1, p.dp = 4, p.zero = 1, p.micro_batch = 1, p.global_batch = 8;
    const StepCosts rs = priced(p);
    p.zero_grad_all_reduce = true;
    const StepCosts ar = priced(p);
    REQUIRE(rs.bucketed);
    const double a = ar.chunk(0, 0).grad_sync_s, r = rs.chunk(0, 0).grad_sync_s;
    REQUIRE(r > 0);
    // A ring all-reduce is a reduce-scatter followed by an all-gather of the same bytes: twice the time, less the
    // latency terms they share.
    CHECK(a / r > 1.9);
    CHECK(a / r < 2.001);
    // ZeRO-2 shards the gradients themselves: DeepSpeed reduce-scatters them whatever the ZeRO-1 path does.
    p.zero = 2;
    const double z2 = priced(p).chunk(0, 0).grad_sync_s;
    p.zero_grad_all_reduce = false;
    CHECK(z2 == approx(priced(p).chunk(0, 0).grad_sync_s));
    CHECK(z2 == approx(r));
    auto all_reduces = [](const std::string& name) { return test::shipped_stack(name).zero_grad_all_reduce; };
    CHECK(all_reduces("Megatron-DeepSpeed"));
    CHECK_FALSE(all_reduces("DeepSpeed"));
    CHECK_FALSE(all_reduces("NeMo 24.07"));
}

TEST_CASE("virtual stages: Megatron-LM 2022 needs pp x vpp to divide the layers; a layout (Megatron-Core) does not") {
    // 10 layers on 4 stages, 16 micro-batches: interleaving shrinks the bubble, but 10 is no multiple of 4 x 2.
    ModelSpec m = uniform_model();
    m.layers = 10;
    PartialPlan partial{plan(PipelineP2p::scatter_gather), {}};
    partial.free.add(PlanField::vpp);
    const auto stacks = load_software_stacks(default_catalog_dir());
    const SoftwareStack* old_lm = find_stack(stacks, "Megatron-LM 2022");
    const SoftwareStack* core = find_stack(stacks, "Megatron-Core");
    REQUIRE(old_lm != nullptr);
    REQUIRE(core != nullptr);
    CHECK_FALSE(old_lm->uneven_virtual_stages);
    CHECK(core->uneven_virtual_stages);
    CHECK(unknown_stack("In-house PyTorch").uneven_virtual_stages);  // unknown: the best feasible
    const PlanCompletion even = complete_plan(m, four_nodes(), partial, *old_lm, {});
    const PlanCompletion uneven = complete_plan(m, four_nodes(), partial, *core, {});
    REQUIRE(even.found);
    REQUIRE(uneven.found);
    CHECK(even.plan.vpp == 1);
    CHECK(uneven.plan.vpp == 2);  // 8 chunks of 1-2 layers (pp x vpp <= 10: every chunk holds a layer)
    // Chosen because it is faster: the engine agrees.
    ParallelPlan p1 = partial.plan, p2 = partial.plan;
    p2.vpp = 2, p2.schedule = Schedule::interleaved;
    CHECK(simulate_step(m, four_nodes(), p2).step_time_s < simulate_step(m, four_nodes(), p1).step_time_s);
}

TEST_CASE("context parallelism shares K/V as the stack does (MaxText all-gathers them, Transformer Engine and PyTorch "
          "pass them around a ring) unless the scenario states it; a bad value names its path") {
    auto algorithm = [](const std::string& name) { return test::shipped_stack(name).cp_algorithm; };
    using Cp = ParallelPlan::CpAlgorithm;
    CHECK(algorithm("MaxText") == Cp::all_gather);
    CHECK(algorithm("NeMo 24.07") == Cp::ring);
    CHECK(algorithm("TorchTitan") == Cp::ring);

    Json j = load_json_file(test::scenario("llama3-70b-partial-16xa3-mega.json"));
    j["parallel"] = {{"cp", 2}};
    j["training"]["framework"] = "MaxText";
    const Scenario maxtext = scenario_from_json(j, "s.json", test::catalog());
    CHECK(maxtext.plan.cp_algorithm == Cp::all_gather);
    j["parallel"]["cp_algorithm"] = "ring";  // stated: the scenario's
    CHECK(scenario_from_json(j, "s.json", test::catalog()).plan.cp_algorithm == Cp::ring);
    j["parallel"].erase("cp_algorithm");
    j["training"]["framework"] = "Megatron-Core";
    CHECK(scenario_from_json(j, "s.json", test::catalog()).plan.cp_algorithm == Cp::ring);

    // The two price different ops: one gather and one attention call, or per-step calls, merges and a ring.
    ParallelPlan p = maxtext.plan;
    auto names = [&](const ParallelPlan& q) {
        std::vector<std::string> out;
        const LayerOps L = layer_ops(maxtext.model, q);
        for (const auto* v : {&L.forward, &L.backward})
            for (const Op& o : *v) out.push_back(o.name);
        return out;
    };
    auto has = [](const std::vector<std::string>& v, const char* n) { return std::count(v.begin(), v.end(), n) > 0; };
    const auto gathered = names(p);
    CHECK(has(gathered, "cp.kv_all_gather"));
    CHECK_FALSE(has(gathered, "cp.out_merge"));
    p.cp_algorithm = Cp::ring;
    const auto ring = names(p);
    CHECK(has(ring, "cp.out_merge"));
    CHECK_FALSE(has(ring, "cp.kv_all_gather"));

    // A published record: the stack's unless it states parallel.cp_algorithm.
    Json run = test::published_record(test::scenario("validation/maxtext-tpu-recipes.json"),
                                      "maxtext-tpu7x-llama31-70b-128k-256-bf16");
    auto load = [](const Json& r) { return test::load_record(r, "cp_algorithm"); };
    CHECK(load(run).plan.cp_algorithm == Cp::all_gather);
    run["parallel"]["cp_algorithm"] = "ring";
    CHECK(load(run).plan.cp_algorithm == Cp::ring);
    run["parallel"]["cp_algorithm"] = "ulysses";
    CHECK(load(run).error.find("$[0].parallel.cp_algorithm") != std::string::npos);

    const std::string err =
        test::stack_catalog_error("bad-cp", [](Json& s) { s["behaviours"]["cp_algorithm"]["value"] = "ulysses"; });
    CHECK(err.find("$.behaviours.cp_algorithm.value") != std::string::npos);
    const std::string missing =
        test::stack_catalog_error("no-cp", [](Json& s) { s["behaviours"].erase("cp_algorithm"); });
    CHECK(missing.find("cp_algorithm") != std::string::npos);
}

TEST_CASE("a grouped matmul over shared M-tiles (MaxText's megablox) computes a tile that straddles two experts "
          "once for each: R + G (tile - 1) rows of work per device and pass; GPU stacks run each expert alone; records "
          "and scenarios may state the tiles, a bad value names its path") {
    CHECK(test::shipped_stack("MaxText").gmm_row_tile == 512);
    CHECK(test::shipped_stack("NeMo 24.07").gmm_row_tile == 0);
    CHECK(test::shipped_stack("TorchTitan").gmm_row_tile == 0);

    // DeepSeek-V3 on 128 TPU7x chips, FSDP only (ep 1): the record states the recipe's tiles, up and down apart.
    Json run = test::published_record(test::scenario("validation/maxtext-tpu-recipes.json"),
                                      "maxtext-tpu7x-deepseek3-671b-128-fp8");
    auto load = [](const Json& r) { return test::load_record(r, "gmm-tiles"); };
    const PublishedRun stated = load(run);
    REQUIRE(stated.error.empty());
    const GroupedGemmTiles& t = stated.plan.gmm_row_tiles;
    CHECK(t.up[0] == 128);
    CHECK(t.up[1] == 256);
    CHECK(t.down[0] == 256);
    CHECK(t.down[2] == 256);
    run["settings"].erase("grouped_gemm_row_tile");
    CHECK(load(run).plan.gmm_row_tiles == GroupedGemmTiles::all(512));  // MaxText's base.yml default
    run["settings"]["grouped_gemm_row_tile"] = {{"up", {256, 256}}, {"down", {256, 256, 512}}};
    CHECK(load(run).error.find("$[0].settings.grouped_gemm_row_tile.up") != std::string::npos);

    // 16 sequences x 4096 tokens x top-8 = 524,288 rows per chip over 256 experts, two devices per TPU7x chip, so
    // 262,144 rows a device: each pass's GEMM does 1 + 256 x (tile - 1) / 262,144 times the work.
    ChipSpec chip = *test::catalog().find_chip("tpu7x");
    REQUIRE(chip.devices_per_chip == 2);
    chip.eff.kernel_overhead_s = 0;  // the launch is paid once per kernel, not per tile
    chip.eff.matmul_half_dim = 0;    // the extra rows alone here; the tile's shape has its own test case
    ParallelPlan p = stated.plan;
    p.gmm_row_tiles.up[0] = 512, p.gmm_row_tiles.up[1] = 256, p.gmm_row_tiles.up[2] = 1024;
    const LayerOps L = layer_ops(stated.model, p, true);
    const ChipSpec* on = &chip;
    auto factor = [&](const Op& o) { return over_dense(o, *on, p); };
    const Op up = find(L.forward, "moe.experts.up");
    CHECK(up.groups == 256);
    CHECK(up.group_rows == approx(524288));
    CHECK(factor(up) == approx(1 + 256.0 * 511 / 262144));
    CHECK(factor(find(L.backward, "moe.experts.up.dgrad")) == approx(1 + 256.0 * 255 / 262144));
    CHECK(factor(find(L.backward, "moe.experts.up.wgrad")) == approx(1 + 256.0 * 1023 / 262144));
    CHECK(factor(find(L.forward, "moe.experts.down")) == approx(1 + 256.0 * 255 / 262144));  // the record's down
    CHECK(factor(find(L.forward, "moe.shared.up")) == 1);  // the shared expert is a dense GEMM
    ChipSpec one_device = chip;
    one_device.devices_per_chip = 1;  // a megacore chip runs one kernel on all 524,288 rows
    on = &one_device;
    CHECK(factor(up) == approx(1 + 256.0 * 511 / 524288));
    ChipSpec gpu = *test::catalog().find_chip("h100-sxm");  // Pallas TPU kernels: a GPU runs XLA's ragged_dot
    on = &gpu;
    CHECK(factor(up) == 1);

    // The priced step: one pricer keeps tiled and untiled layers apart (its cache key), each as a fresh one prices it.
    const CollectiveTimer timer(stated.system, NetworkBackend::analytical);
    StepPricer warm(stated.model, stated.system, timer);
    ParallelPlan untiled = stated.plan;
    untiled.gmm_row_tiles = GroupedGemmTiles{};
    StepCosts a, b;
    warm.price(stated.plan, a, false);
    warm.price(untiled, b, false);
    const StepCosts fresh = price_step(stated.model, stated.system, untiled, timer);
    CHECK(b.chunk(0, 0).fwd_s == approx(fresh.chunk(0, 0).fwd_s));
    CHECK(a.chunk(0, 0).fwd_s > b.chunk(0, 0).fwd_s);

    // A capacity factor pads every expert to the same size: no ragged groups, nothing shared.
    ModelSpec dropping = stated.model;
    dropping.moe.capacity_factor = 1.25;
    for (const Op& o : layer_ops(dropping, p, true).forward) CHECK(o.groups == 0);

    // A scenario states them under training; one number sets every pass and matrix.
    Json j = load_json_file(test::scenario("llama3-70b-partial-16xa3-mega.json"));
    j["training"]["grouped_gemm_row_tile"] = 128;
    CHECK(scenario_from_json(j, "s.json", test::catalog()).plan.gmm_row_tiles == GroupedGemmTiles::all(128));
    j["training"]["grouped_gemm_row_tile"] = -1;
    try {
        (void)scenario_from_json(j, "s.json", test::catalog());
        FAIL("a negative row tile loaded");
    } catch (const InputError& e) {
        CHECK(std::string(e.what()).find("$.training.grouped_gemm_row_tile") != std::string::npos);
    }
    const std::string missing =
        test::stack_catalog_error("no-gmm", [](Json& s) { s["behaviours"].erase("grouped_gemm_row_tile"); });
    CHECK(missing.find("grouped_gemm_row_tile") != std::string::npos);
}

TEST_CASE("a tiled grouped matmul loads each weight block for one row tile: the MXU sees the tile as the GEMM's M "
          "(forward, input gradient) or its contraction (weight gradient), whatever the expert's row count") {
    Json run = test::published_record(test::scenario("validation/maxtext-tpu-recipes.json"),
                                      "maxtext-tpu7x-deepseek3-671b-128-fp8");
    const PublishedRun r = test::load_record(run, "gmm-shape");
    REQUIRE(r.error.empty());
    ChipSpec chip = *test::catalog().find_chip("tpu7x");
    REQUIRE(chip.eff.matmul_half_dim == 128);  // half of a 256 x 256 MXU
    chip.eff.kernel_overhead_s = 0;
    ParallelPlan p = r.plan;
    p.gmm_row_tiles.up[0] = 512, p.gmm_row_tiles.up[1] = 128, p.gmm_row_tiles.up[2] = 256;
    const LayerOps L = layer_ops(r.model, p, true);
    const ParallelPlan* plan = &p;
    // The time against the same GEMM priced dense (XLA's own tiles, the op's own dimensions), over the extra rows of
    // work the shared tiles add (the other test case): what is left is the shape term's ratio.
    auto shape_ratio = [&](const Op& o) {
        const double rows = o.group_rows / chip.devices_per_chip;
        const double work = 1 + o.groups * (o.group_row_tiles[static_cast<int>(o.pass)] - 1) / rows;
        return over_dense(o, chip, *plan) / work;
    };
    auto saturation = [](double d) { return d / (d + 128); };
    // Each expert's forward GEMM has 524,288 / 256 = 2,048 rows per chip, 4,096 columns (both gated halves) and a
    // 7,168 deep contraction: dense, its shortest side is the 2,048 rows. Tiled, the MXU sees 512 rows per weight block in the forward,
    // 128 in the input gradient, and sums 256 rows at a time in the weight gradient.
    const Op up = find(L.forward, "moe.experts.up");
    REQUIRE(up.m == approx(2048));
    REQUIRE(up.n == approx(4096));
    REQUIRE(up.k == approx(7168));
    CHECK(shape_ratio(up) == approx(saturation(2048) / saturation(512)));
    CHECK(shape_ratio(find(L.backward, "moe.experts.up.dgrad")) == approx(saturation(2048) / saturation(128)));
    CHECK(shape_ratio(find(L.backward, "moe.experts.up.wgrad")) == approx(saturation(2048) / saturation(256)));
    // The 128-row tile fills half the MXU: about 1.9x the dense GEMM's time on the shape alone.
    CHECK(shape_ratio(find(L.backward, "moe.experts.up.dgrad")) > 1.8);

    // Which dimension the tile replaces: a 4,096-row tile, longer than an expert's 2,048 rows, makes the rows
    // dimension 4,096 in every pass, so the shortest side becomes 4,096 (the columns; the wgrad's contraction). Had
    // the tile replaced the columns of the forward or the M of the wgrad, the expert's 2,048 rows would stay shortest.
    ParallelPlan long_tiles = p;
    long_tiles.gmm_row_tiles.up[0] = long_tiles.gmm_row_tiles.up[1] = long_tiles.gmm_row_tiles.up[2] = 4096;
    plan = &long_tiles;
    const LayerOps Long = layer_ops(r.model, long_tiles, true);
    CHECK(shape_ratio(find(Long.forward, "moe.experts.up")) == approx(saturation(2048) / saturation(4096)));
    CHECK(shape_ratio(find(Long.backward, "moe.experts.up.dgrad")) == approx(saturation(2048) / saturation(4096)));
    CHECK(shape_ratio(find(Long.backward, "moe.experts.up.wgrad")) == approx(saturation(2048) / saturation(4096)));

    // A GPU runs XLA's ragged_dot: each expert is its own GEMM of its own rows.
    CHECK(over_dense(up, *test::catalog().find_chip("h100-sxm"), p) == approx(1));
}
