// Mechanisms of PyTorch-native stacks (TorchTitan / FSDP2) that Megatron-style stacks lack (issue 12, other
// frameworks): the FlashAttention-2 kernel that PyTorch SDPA runs on Hopper instead of a wgmma kernel, and
// TorchTitan's per-op selective recomputation (every other weight GEMM in forward order saved, everything else but
// the attention kernel and the TP reduce-scatters run again), and eager PyTorch's unfused elementwise ops. Each value below is derived from the model's shapes
// or the chip's stated fractions, so that each check can fail on its own.
#include <doctest/doctest.h>

#include <algorithm>

#include "models/fast_step.hpp"
#include "models/layer_ops.hpp"
#include "models/memory.hpp"
#include "models/op_cost.hpp"
#include "models/published_run.hpp"
#include "models/scenario.hpp"
#include "models/software_stack.hpp"
#include "models/step.hpp"
#include "hardware/input_error.hpp"
#include "tests/helpers.hpp"

using namespace podsim;
using podsim::test::approx;

namespace {

ParallelPlan titan_plan() {
    ParallelPlan p;
    p.dp = 8, p.zero = 3, p.micro_batch = 2, p.global_batch = 16;
    p.attention = AttentionKernel::flash2;
    p.recompute = Recompute::selective, p.selective = SelectiveRecompute::alternate_matmuls;
    return p;
}

const ChipSpec& chip(const char* id) {
    const ChipSpec* c = test::catalog().find_chip(id);
    REQUIRE(c != nullptr);
    return *c;
}

double op_s(const Op& o, const ChipSpec& c, const ParallelPlan& p) {
    CostContext ctx;
    ctx.chip = &c, ctx.plan = &p;
    return op_time_s(o, ctx);
}

const Op& find_op(const std::vector<Op>& ops, const std::string& name) {
    const auto it = std::find_if(ops.begin(), ops.end(), [&](const Op& o) { return o.name == name; });
    REQUIRE_MESSAGE(it != ops.end(), name);
    return *it;
}

double matmul_flops(const std::vector<Op>& ops) {
    double f = 0;
    for (const auto& o : ops)
        if (o.kind == OpKind::matmul) f += o.flops;
    return f;
}

}  // namespace

TEST_CASE("FlashAttention-2 on Hopper runs at the chip's flash2 fraction; on A100 it is the flash kernel itself") {
    const ChipSpec& h100 = chip("h100-sxm");
    const ChipSpec& a100 = chip("a100-sxm-80gb");
    // The catalog's figure: SDPA's FlashAttention-2 backend at 329.5 of 989 TFLOP/s (pytorch/pytorch#142132).
    CHECK(h100.eff.flash2_attention_peak_fraction == approx(0.333));
    CHECK(h100.eff.flash2_attention_peak_fraction < h100.eff.attention_peak_fraction);
    CHECK(a100.eff.flash2_attention_peak_fraction == approx(a100.eff.attention_peak_fraction));  // absent: the same

    ParallelPlan fa2 = titan_plan(), fa3 = titan_plan();
    fa3.attention = AttentionKernel::flash;
    const LayerOps L2 = layer_ops(test::llama3_8b(), fa2), L3 = layer_ops(test::llama3_8b(), fa3);
    for (const char* name : {"flash_attention", "flash_attention.bwd"}) {
        const Op& a2 = find_op(name == std::string("flash_attention") ? L2.forward : L2.backward, name);
        const Op& a3 = find_op(name == std::string("flash_attention") ? L3.forward : L3.backward, name);
        CHECK(a2.flash2);
        CHECK_FALSE(a3.flash2);
        CHECK(a2.flops == a3.flops);  // the same work: causal QK^T and PV (and 2.5x that backward)
        // Compute-bound: FLOPs over the bf16 peak times the kernel's fraction (the backward at 0.86 of the
        // forward's rate, FlashAttention-2/-3 papers), plus one launch.
        const double rate = is_backward(a2) ? 0.86 : 1.0;
        CHECK(op_s(a2, h100, fa2) ==
              approx(a2.flops / (h100.peak_bf16_flops_per_s * 0.333 * rate) + h100.eff.kernel_overhead_s));
        CHECK(op_s(a3, h100, fa3) ==
              approx(a3.flops / (h100.peak_bf16_flops_per_s * h100.eff.attention_peak_fraction * rate) +
                     h100.eff.kernel_overhead_s));
        CHECK(op_s(a2, a100, fa2) == approx(op_s(a3, a100, fa3)));
    }
    // Memory: the same kernel family, the same saved tensors.
    ParallelPlan none2 = fa2, none3 = fa3;
    none2.recompute = none3.recompute = Recompute::none;
    CHECK(layer_activation_bytes(test::llama3_8b(), none2) == approx(layer_activation_bytes(test::llama3_8b(), none3)));
}

TEST_CASE("The flash backward runs at the chip's backward rate; a rerun forward at the forward's") {
    const ChipSpec& h100 = chip("h100-sxm");
    CHECK(h100.eff.attention_backward_rate == approx(0.86));  // 63%/73% (FA2 on A100); 518/600 (cuDNN on H100)
    ParallelPlan p = titan_plan();
    p.attention = AttentionKernel::flash, p.recompute = Recompute::full;
    const LayerOps L = layer_ops(test::llama3_8b(), p);
    const Op& fwd = find_op(L.forward, "flash_attention");
    const Op& bwd = find_op(L.backward, "flash_attention.bwd");
    const Op& rerun = find_op(L.recompute, "flash_attention");
    const double fwd_rate = h100.peak_bf16_flops_per_s * h100.eff.attention_peak_fraction;
    CHECK(bwd.flops == approx(2.5 * fwd.flops));  // five products to two
    CHECK(op_s(bwd, h100, p) == approx(bwd.flops / (fwd_rate * 0.86) + h100.eff.kernel_overhead_s));
    CHECK(op_s(rerun, h100, p) == approx(op_s(fwd, h100, p)));
    // Absent from a chip's JSON: the backward at the forward's rate.
    ChipSpec plain = h100;
    plain.eff.attention_backward_rate = 1;
    CHECK(op_s(bwd, plain, p) == approx(bwd.flops / fwd_rate + h100.eff.kernel_overhead_s));
}

TEST_CASE("TorchTitan's selective recomputation: every other weight matrix in forward order, and every op but the "
          "attention kernel and the TP reduce-scatters") {
    const ModelSpec m = test::llama3_8b();
    const double T = 2.0 * 8192, h = 4096, kv = 8 * 128, f = 14336;
    const LayerOps L = layer_ops(m, titan_plan());
    // Forward order q, k, v, o, gate (w1), up (w3), down (w2): k, o and up run again (the 2nd, 4th and 6th).
    CHECK(matmul_flops(L.recompute) == approx(2 * T * h * (kv + h + f)));
    CHECK(find_op(L.recompute, "qkv").flops == approx(2 * T * h * kv));
    CHECK(find_op(L.recompute, "attn.proj").flops == approx(2 * T * h * h));
    CHECK(find_op(L.recompute, "mlp.up").flops == approx(2 * T * h * f));
    for (const auto& o : L.recompute) {
        CHECK_MESSAGE(o.name != "mlp.down", "the 7th matrix is saved");
        CHECK_MESSAGE(o.kind != OpKind::attention, "the attention kernel's output is saved");
    }
    // Every elementwise op of the forward runs again (norms, RoPE, the activation, the residual adds).
    const auto count = [](const std::vector<Op>& ops, OpKind k) {
        return std::count_if(ops.begin(), ops.end(), [&](const Op& o) { return o.kind == k; });
    };
    CHECK(count(L.recompute, OpKind::elementwise) == count(L.forward, OpKind::elementwise));

    // A GELU MLP has one up matrix: q, k, v, o, up, down, so k, o and down run again.
    ModelSpec gpt = m;
    gpt.activation = Activation::gelu;
    CHECK(matmul_flops(layer_ops(gpt, titan_plan()).recompute) == approx(2 * T * h * (kv + h) + 2 * T * f * h));

    // Under TP with sequence parallelism the all-gathers run again (a recomputed GEMM reads their output); the
    // reduce-scatters are saved.
    ParallelPlan tp = titan_plan();
    tp.tp = 2, tp.dp = 4, tp.sp = true;
    const LayerOps LT = layer_ops(m, tp);
    int gathers = 0;
    for (const auto& o : LT.recompute) {
        CHECK(!(o.kind == OpKind::collective && o.comm == CommKind::reduce_scatter));
        gathers += o.kind == OpKind::collective && o.comm == CommKind::all_gather;
    }
    CHECK(gathers == 2);

    // Megatron's meaning of selective (the attention core) recomputes nothing under a flash kernel.
    ParallelPlan core = titan_plan();
    core.selective = SelectiveRecompute::attention_core;
    CHECK(layer_ops(m, core).recompute.empty());
}

TEST_CASE("TorchTitan's selective recomputation keeps the layer input, the attention output and the odd matrices' "
          "outputs") {
    const ModelSpec m = test::llama3_8b();
    const double T = 2.0 * 8192, h = 4096, kv = 8 * 128, f = 14336, heads = 32, vd = 128;
    const ParallelPlan p = titan_plan();
    // Input (bf16) + attention output (bf16) and its fp32 log-sum-exp per head + q, v, gate (w1) and down (w2) outputs.
    const double want = 2 * T * h + T * heads * (2 * vd + 4) + 2 * T * (h + kv + f + h);
    CHECK(layer_activation_bytes(m, p) == approx(want));
    ParallelPlan none = p, full = p;
    none.recompute = Recompute::none, full.recompute = Recompute::full;
    CHECK(layer_activation_bytes(m, p) < layer_activation_bytes(m, none));
    CHECK(layer_activation_bytes(m, p) > layer_activation_bytes(m, full));
    // With TP 2 and sequence parallelism: the input and the two reduce-scatters' outputs are sharded by 2, the
    // GEMM outputs and the attention's by their heads or columns.
    ParallelPlan tp = p;
    tp.tp = 2, tp.dp = 4, tp.sp = true;
    const double want_tp = 2 * (T / 2) * h + 2 * (2 * (T / 2) * h) + T * (heads / 2) * (2 * vd + 4) +
                           2 * T * ((h + kv + f) / 2 + h);
    CHECK(layer_activation_bytes(m, tp) == approx(want_tp));
}

TEST_CASE("the engine and the closed form agree on a TorchTitan plan (FlashAttention-2, per-op recomputation)") {
    const SystemSpec sys = test::catalog().gpu_system("dgx-h100", 1, "t", "$");
    const ParallelPlan p = titan_plan();
    const StepResult r = simulate_step(test::llama3_8b(), sys, p);
    REQUIRE(r.feasible);
    StepEstimator est(test::llama3_8b(), sys);
    const StepEstimate e = est.estimate(p);
    REQUIRE(e.feasible());
    CHECK(e.step_time_s == doctest::Approx(r.step_time_s).epsilon(0.01));
    // And the mechanisms cost time: each alone is slower than the step without it.
    ParallelPlan fa3 = p, saved = p;
    fa3.attention = AttentionKernel::flash;
    saved.recompute = Recompute::none;
    CHECK(simulate_step(test::llama3_8b(), sys, fa3).step_time_s < r.step_time_s);
    CHECK(simulate_step(test::llama3_8b(), sys, saved).step_time_s < r.step_time_s);
}

TEST_CASE("the software catalog: TorchTitan runs FlashAttention-2 and its per-op policy; Megatron-Core its own; a "
          "bad value names its path") {
    auto stack = [](const std::string& name) { return test::shipped_stack(name); };
    CHECK(stack("TorchTitan").attention == AttentionKernel::flash2);
    CHECK(stack("TorchTitan").selective == SelectiveRecompute::alternate_matmuls);
    CHECK(stack("NeMo 24.07").attention == AttentionKernel::flash);
    CHECK(stack("NeMo 24.07").selective == SelectiveRecompute::attention_core);
    PartialPlan pp;
    pp.free.add(PlanField::attention);
    apply_stack_behaviours(stack("TorchTitan"), pp);
    CHECK(pp.plan.attention == AttentionKernel::flash2);
    CHECK(pp.plan.selective == SelectiveRecompute::alternate_matmuls);
    const std::string err = test::stack_catalog_error(
        "bad-selective", [](Json& s) { s["behaviours"]["selective_recompute"]["value"] = "some_ops"; });
    CHECK(err.find("$.behaviours.selective_recompute.value") != std::string::npos);
    const std::string missing = test::stack_catalog_error(
        "no-selective", [](Json& s) { s["behaviours"].erase("selective_recompute"); });
    CHECK(missing.find("selective_recompute") != std::string::npos);
}

TEST_CASE("a published record may state its TP overlap (TorchTitan's async TP); a bad value names its path") {
    Json run = test::published_record(test::scenario("validation/torchtitan-h100.json"),
                                      "torchtitan-llama31-70b-256xh100-2d-asynctp");
    auto load = [](const Json& r) { return test::load_record(r, "tp_overlap"); };
    const PublishedRun stated = load(run);
    REQUIRE(stated.error.empty());
    CHECK(stated.plan.tp_comm_overlap == TpOverlap::full);
    CHECK(stated.plan.attention == AttentionKernel::flash2);  // the stack's
    run["settings"].erase("tp_comm_overlap");
    CHECK(load(run).plan.tp_comm_overlap == TpOverlap::backward);  // TorchTitan's default
    run["settings"]["tp_comm_overlap"] = "sometimes";
    const PublishedRun bad = load(run);
    CHECK(bad.error.find("$[0].settings.tp_comm_overlap") != std::string::npos);
}

TEST_CASE("eager PyTorch: RMSNorm, RoPE and SwiGLU as separate kernels and HBM passes; LayerNorm and GELU as fused") {
    const ModelSpec m = test::llama3_8b();
    ParallelPlan fused = titan_plan(), eager = titan_plan();
    fused.recompute = eager.recompute = Recompute::none;
    eager.eager_elementwise = true;
    const LayerOps F = layer_ops(m, fused), E = layer_ops(m, eager);
    // Bytes per element of the tensor each op reads and writes: fused 4 (norm, RoPE) and 6 (SwiGLU's gate and up
    // in, its output out); eager, counted from TorchTitan's model code, 36, 20 and 10.
    const double T = 2.0 * 8192, h = 4096, q = 4096, kv = 1024, f = 14336;
    CHECK(find_op(F.forward, "norm1").bytes == approx(4 * T * h));
    CHECK(find_op(E.forward, "norm1").bytes == approx(36 * T * h));
    CHECK(find_op(E.forward, "norm1").kernels == 7);
    CHECK(find_op(E.forward, "rope").bytes == approx(20 * T * (q + kv)));
    CHECK(find_op(E.forward, "rope").kernels == 6);
    CHECK(find_op(E.forward, "mlp.act").bytes == approx(10 * T * f));
    CHECK(find_op(E.backward, "norm2.bwd").bytes == approx(2 * 36 * T * h));  // the backward mirrors it
    CHECK(find_op(E.forward, "residual_dropout1").bytes == approx(find_op(F.forward, "residual_dropout1").bytes));
    // A GPT layer (LayerNorm, GELU, learned positions): nothing changes.
    ModelSpec gpt = m;
    gpt.norm = Norm::layernorm, gpt.activation = Activation::gelu, gpt.position = Position::learned;
    const LayerOps GF = layer_ops(gpt, fused), GE = layer_ops(gpt, eager);
    REQUIRE(GF.forward.size() == GE.forward.size());
    for (size_t i = 0; i < GF.forward.size(); ++i) CHECK(GF.forward[i].bytes == GE.forward[i].bytes);
    // The step (TorchTitan's selective recomputation, which fits): slower by the extra passes alone.
    const SystemSpec sys = test::catalog().gpu_system("dgx-h100", 1, "t", "$");
    ParallelPlan eager_step = titan_plan();
    eager_step.eager_elementwise = true;
    const StepResult fast = simulate_step(m, sys, titan_plan()), slow = simulate_step(m, sys, eager_step);
    REQUIRE(fast.feasible);
    REQUIRE(slow.feasible);
    CHECK(slow.step_time_s > fast.step_time_s);
    CHECK(layer_activation_bytes(m, eager) == approx(layer_activation_bytes(m, fused)));
}

TEST_CASE("torch.compile is the stack's default unless stated: TorchTitan and DeepSpeed eager, Megatron fused; "
          "scenarios and records state it") {
    const auto stacks = load_software_stacks(default_catalog_dir());
    CHECK(find_stack(stacks, "TorchTitan")->eager_elementwise);
    CHECK(find_stack(stacks, "DeepSpeed ZeRO-3")->eager_elementwise);
    CHECK_FALSE(find_stack(stacks, "NeMo 24.07")->eager_elementwise);
    CHECK_FALSE(find_stack(stacks, "MaxText")->eager_elementwise);
    const std::string err = test::stack_catalog_error(
        "bad-eager", [](Json& s) { s["behaviours"]["elementwise_kernels"]["value"] = "compiled"; });
    CHECK(err.find("$.behaviours.elementwise_kernels.value") != std::string::npos);

    Json j = load_json_file(test::scenario("llama3-70b-partial-16xa3-mega.json"));
    j["training"]["framework"] = "TorchTitan";
    CHECK(scenario_from_json(j, "s.json", test::catalog()).plan.eager_elementwise);
    j["training"]["compile"] = true;
    CHECK_FALSE(scenario_from_json(j, "s.json", test::catalog()).plan.eager_elementwise);
    j["training"]["compile"] = "yes";
    CHECK_THROWS_WITH_AS(scenario_from_json(j, "s.json", test::catalog()),
                         doctest::Contains("s.json: $.training.compile"), InputError);

    const Json all = load_json_file(test::scenario("validation/torchtitan-h100.json"));
    const std::string file = test::temp_dir() + "/compile_runs.json";
    test::write_file(file, all.dump());
    const auto runs = load_published_runs(file, test::catalog());
    for (const auto& r : runs) {
        REQUIRE(r.error.empty());
        const bool eager = r.id.find("fsdp-eager") != std::string::npos;
        CHECK_MESSAGE(r.plan.eager_elementwise == eager, r.id);
    }
}
