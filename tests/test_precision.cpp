// Precision per GEMM and pass (issue 12): int8 (AQT), fp4 (NVFP4) and the fp8 scaling recipes. Which GEMM runs at
// which rate, the quantize ops each recipe adds and their bytes, chips that cannot run a precision, and the
// engine and the closed form still agreeing on such plans.
// Last, a GEMM's epilogue: on a chip whose GEMM kernels write each output tile after its K loop (Ampere) the output's
// write adds to the math; on chips whose kernels overlap it with the next tile (Hopper on, TPUs) it does not.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "models/fast_step.hpp"
#include "models/layer_ops.hpp"
#include "models/op_cost.hpp"
#include "models/plan_space.hpp"
#include "models/published_run.hpp"
#include "models/quantize_ops.hpp"
#include "models/scenario.hpp"
#include "models/step.hpp"
#include "models/step_costs.hpp"
#include "tests/helpers.hpp"

using namespace podsim;
using podsim::test::approx;

namespace {

// h 4096, ffn 16384, 2048-token micro-batch: every GEMM of the MLP has its smallest dimension at 2048.
ModelSpec dense_model() {
    ModelSpec m;
    m.name = "dense";
    m.layers = 8, m.hidden = 4096, m.ffn_hidden = 16384, m.heads = 32, m.kv_heads = 32, m.head_dim = 128;
    m.vocab = 32000, m.seq_len = 2048;
    m.position = Position::rope, m.dropout = false, m.bias = false;
    return m;
}

ParallelPlan plan_in(Precision pr) {
    ParallelPlan p;
    p.precision = pr;
    p.micro_batch = 1, p.global_batch = 8;  // 8 micro-batches on one replica
    return p;
}

const Op& find_op(const std::vector<Op>& ops, const std::string& name) {
    const auto it = std::find_if(ops.begin(), ops.end(), [&](const Op& o) { return o.name == name; });
    REQUIRE_MESSAGE(it != ops.end(), name);
    return *it;
}

double op_s(const Op& o, const ChipSpec& chip, const ParallelPlan& p) {
    CostContext c;
    c.chip = &chip, c.plan = &p;
    return op_time_s(o, c);
}

// A GEMM's time on the roofline when compute-bound: FLOPs over the peak times the efficiency, with the
// short-dimension saturation d / (d + half_dim), plus one launch.
double gemm_s(const Op& o, double peak, double fraction, const ChipSpec& chip) {
    const double d = std::min({o.m, o.n, o.k});
    return o.flops / (peak * fraction * d / (d + chip.eff.matmul_half_dim)) + chip.eff.kernel_overhead_s;
}

double hbm_s(double bytes, const ChipSpec& chip) {
    return bytes / (chip.hbm_bytes_per_s * chip.eff.memory_bw_fraction) + chip.eff.kernel_overhead_s;
}

}  // namespace

TEST_CASE("int8 (AQT) on TPU v5e: forward and dgrad GEMMs at 394 TOPS x the 16-bit GEMM efficiency, wgrad at bf16") {
    const ChipSpec& v5e = *test::catalog().find_chip("tpu-v5e");
    REQUIRE(v5e.peak_int8_ops_per_s == approx(394e12));
    const ParallelPlan p = plan_in(Precision::int8);
    const LayerOps L = layer_ops(dense_model(), p);
    // mlp.up: 2048 x 16384 x 4096 (M x N x K), 2.75e11 FLOPs; its bytes (1-byte operands) take 0.2 ms, its FLOPs
    // 0.8 ms: compute-bound.
    const Op& up = find_op(L.forward, "mlp.up");
    CHECK(up.format == NumFormat::int8);
    CHECK(up.flops == approx(2.0 * 2048 * 16384 * 4096));
    CHECK(up.bytes == approx(1.0 * (2048 * 4096 + 4096 * 16384) + 2.0 * 2048 * 16384));
    CHECK(op_s(up, v5e, p) == approx(gemm_s(up, 394e12, v5e.eff.matmul_peak_fraction, v5e)));
    const Op& dgrad = find_op(L.backward, "mlp.up.dgrad");
    CHECK(dgrad.format == NumFormat::int8);
    CHECK(op_s(dgrad, v5e, p) == approx(gemm_s(dgrad, 394e12, v5e.eff.matmul_peak_fraction, v5e)));
    // The weight gradient stays bf16 (MaxText's int8: drhs_bits=None), at 197 TFLOPS with 2-byte operands.
    const Op& wgrad = find_op(L.backward, "mlp.up.wgrad");
    CHECK(wgrad.format == NumFormat::b16);
    CHECK(wgrad.bytes == approx(2.0 * (4096 * 2048 + 2048 * 16384) + 2.0 * 4096 * 16384));
    CHECK(op_s(wgrad, v5e, p) == approx(gemm_s(wgrad, 197e12, v5e.eff.matmul_peak_fraction, v5e)));
    // So the int8 GEMM takes half the time of its bf16 twin.
    const LayerOps L16 = layer_ops(dense_model(), plan_in(Precision::bf16));  // kept: find_op returns a reference
    const Op& up16 = find_op(L16.forward, "mlp.up");
    CHECK(op_s(up, v5e, p) - v5e.eff.kernel_overhead_s ==
          approx((op_s(up16, v5e, p) - v5e.eff.kernel_overhead_s) / 2));
}

TEST_CASE("an int8 GEMM's quantize ops read each bf16 operand and write its int8 copy, in each pass that uses it") {
    const ChipSpec& v5e = *test::catalog().find_chip("tpu-v5e");
    const ParallelPlan p = plan_in(Precision::int8);
    const LayerOps L = layer_ops(dense_model(), p);
    const double T = 2048, h = 4096, f = 16384;
    // 2 bytes read + 1 written per element; AQT quantizes per dot and per micro-batch: the forward its X and W,
    // the dgrad its dY and (again) W; the bf16 wgrad nothing.
    const Op& qx = find_op(L.forward, "mlp.up.quant_x");
    CHECK(qx.quantize);
    CHECK(qx.kind == OpKind::elementwise);
    CHECK(qx.bytes == approx(3 * T * h));
    CHECK(op_s(qx, v5e, p) == approx(hbm_s(3 * T * h, v5e)));
    CHECK(find_op(L.forward, "mlp.up.quant_w").bytes == approx(3 * h * f));
    CHECK(find_op(L.backward, "mlp.up.quant_dy").bytes == approx(3 * T * f));
    CHECK(find_op(L.backward, "mlp.up.dgrad.quant_w").bytes == approx(3 * h * f));
    // Every int8 GEMM of the layer gets its casts; nothing else does.
    int gemms = 0, casts = 0;
    for (const Op& o : L.forward) gemms += o.format == NumFormat::int8, casts += o.quantize;
    CHECK(gemms == 4);  // qkv, attn.proj, mlp.up, mlp.down
    CHECK(casts == 2 * gemms);
    // A bf16 plan has no casts, and its GEMMs read 2-byte operands.
    const LayerOps B = layer_ops(dense_model(), plan_in(Precision::bf16));
    CHECK(std::none_of(B.forward.begin(), B.forward.end(), [](const Op& o) { return o.quantize; }));
    CHECK(find_op(B.forward, "mlp.up").bytes == approx(2 * (T * h + h * f) + 2 * T * f));
}

TEST_CASE("an int8 plan on a chip without int8 is rejected, the chip named; fp4 on H100 likewise") {
    const ModelSpec m = dense_model();
    const SystemSpec v3 = test::catalog().tpu_system("v3-32", 1, "t", "$");  // 16 chips
    ParallelPlan p = plan_in(Precision::int8);
    p.dp = 16, p.global_batch = 16;
    const StepResult r = simulate_step(m, v3, p);
    REQUIRE_FALSE(r.feasible);
    REQUIRE(r.infeasible.size() == 1);
    CHECK(r.infeasible[0].find("TPU v3 has no int8 tensor math") != std::string::npos);
    CHECK(r.infeasible_paths[0] == "$.training.precision");

    const SystemSpec h100 = test::catalog().gpu_system("dgx-h100", 1, "t", "$");
    ParallelPlan q = plan_in(Precision::fp4);
    q.dp = 8;
    const StepResult s = simulate_step(m, h100, q);
    REQUIRE_FALSE(s.feasible);
    CHECK(s.infeasible[0].find(h100.chip.name + " has no fp4 tensor math") != std::string::npos);
    q.precision = Precision::int8;  // H100's tensor cores do int8 (1979 TOPS, datasheet)
    CHECK(simulate_step(m, h100, q).feasible);
}

TEST_CASE("fp4 (NVFP4) on B200: every linear GEMM at 9 PFLOPS x the fp8 efficiency, 0.5 byte + a scale per 16") {
    const ChipSpec& b200 = *test::catalog().find_chip("b200");
    REQUIRE(b200.peak_fp4_flops_per_s == approx(9e15));
    const ParallelPlan p = plan_in(Precision::fp4);
    const LayerOps L = layer_ops(dense_model(), p);
    const double T = 2048, h = 4096, f = 16384, el = 0.5 + 1.0 / 16;
    for (const char* name : {"mlp.up", "mlp.up.dgrad", "mlp.up.wgrad"}) {
        // The NVFP4 paper runs fprop, dgrad and wgrad in NVFP4 (the wgrad's inputs through a Hadamard transform).
        const Op& o = find_op(name == std::string("mlp.up") ? L.forward : L.backward, name);
        CHECK_MESSAGE(o.format == NumFormat::fp4, name);
    }
    const Op& up = find_op(L.forward, "mlp.up");
    CHECK(up.bytes == approx(el * (T * h + h * f) + 2 * T * f));
    // 2.75e11 FLOPs at 9e15 x 0.459 x 2048/2112 = 69 us; 92 MB at 8 TB/s x 0.85 = 14 us: compute-bound.
    CHECK(op_s(up, b200, p) == approx(gemm_s(up, 9e15, b200.eff.fp8_matmul_peak_fraction, b200)));
    // Quantize: an amax pass and a quantize pass over bf16 (the two-level scale needs the tensor's amax first),
    // writing the row-wise copy and the column-wise one the wgrad reads; weights once per step (8 micro-batches).
    CHECK(find_op(L.forward, "mlp.up.quant_x").bytes == approx(T * h * (2 * 2 + 2 * el)));
    CHECK(find_op(L.forward, "mlp.up.quant_x").kernels == 2);
    CHECK(find_op(L.forward, "mlp.up.quant_w").bytes == approx(h * f * (2 * 2 + 2 * el) / 8));
    CHECK(find_op(L.backward, "mlp.up.quant_dy").bytes == approx(T * f * (2 * 2 + 2 * el)));
}

TEST_CASE("the fp8 recipes add their casts: cast-transpose per GEMM input, an amax pass for tensorwise, block scales") {
    ParallelPlan p = plan_in(Precision::fp8);
    const double T = 2048, h = 4096, f = 16384, M = 8;
    auto quant = [&](Fp8Recipe r, const char* name) {
        p.fp8_recipe = r;
        return find_op(layer_ops(dense_model(), p).forward, name);
    };
    // mlp.down's input is the activation's bf16 output (T x f). Delayed: read it once, write fp8 and its
    // transpose: 4 bytes an element, one kernel.
    CHECK(quant(Fp8Recipe::delayed, "mlp.down.quant_x").bytes == approx(4 * T * f));
    CHECK(quant(Fp8Recipe::delayed, "mlp.down.quant_x").kernels == 1);
    // Tensorwise (current scaling): the amax read first, then the cast: 6 bytes, two kernels.
    CHECK(quant(Fp8Recipe::tensorwise, "mlp.down.quant_x").bytes == approx(6 * T * f));
    CHECK(quant(Fp8Recipe::tensorwise, "mlp.down.quant_x").kernels == 2);
    // Blockwise: one read, two copies each with a scale per 32 elements.
    CHECK(quant(Fp8Recipe::blockwise, "mlp.down.quant_x").bytes == approx(T * f * (2 + 2 * (1 + 1.0 / 32))));
    // A GEMM fed by a norm: the norm writes the two fp8 copies instead of its bf16 output (TE LayerNormLinear), so
    // delayed scaling adds no bytes and no kernel; blockwise adds the scales; tensorwise cannot fuse (it needs the
    // output's amax first).
    const Op fused = quant(Fp8Recipe::delayed, "mlp.up.quant_x (in norm2)");
    CHECK(fused.bytes == 0);
    CHECK(fused.kernels == 0);
    CHECK(quant(Fp8Recipe::blockwise, "qkv.quant_x (in norm1)").bytes == approx(T * h * 2.0 / 32));
    CHECK(quant(Fp8Recipe::tensorwise, "qkv.quant_x").bytes == approx(6 * T * h));
    p.fp8_recipe = Fp8Recipe::delayed;
    const LayerOps L = layer_ops(dense_model(), p);
    CHECK(find_op(L.forward, "mlp.up.quant_w").bytes == approx(4 * h * f / M));  // cached across micro-batches
    CHECK(find_op(L.backward, "mlp.up.quant_dy").bytes == approx(4 * T * f));
    CHECK(find_op(L.forward, "mlp.up").bytes == approx(1 * (T * h + h * f) + 2 * T * f));
    // Full recomputation repeats the input casts, not the cached weights'.
    p.recompute = Recompute::full;
    const LayerOps R = layer_ops(dense_model(), p);
    CHECK(std::count_if(R.recompute.begin(), R.recompute.end(), [](const Op& o) { return o.quantize; }) == 4);
}

TEST_CASE("amax reductions: delayed scaling once per model chunk over TP x DP; tensorwise per sequence-parallel GEMM") {
    ParallelPlan p = plan_in(Precision::fp8);
    p.tp = 4, p.dp = 2, p.sp = true, p.global_batch = 16;
    // Delayed: 3 amaxes per GEMM forward, 2 backward, 4 bytes each, all-reduced over TP then DP.
    const LayerOps C = chunk_ops(p, 10);
    REQUIRE(C.forward.size() == 3);  // the history update, TP, DP
    CHECK(find_op(C.forward, "fp8.amax_reduce.tp").comm_bytes == approx(4 * 3 * 10));
    CHECK(find_op(C.forward, "fp8.amax_reduce.dp").group == CommGroup::fsdp);
    CHECK(find_op(C.backward, "fp8.amax_reduce.tp").comm_bytes == approx(4 * 2 * 10));
    CHECK(find_op(C.forward, "fp8.amax_history").bytes == approx(2 * 1024 * 4 * 3 * 10));
    const LayerOps D = layer_ops(dense_model(), p);
    CHECK(std::none_of(D.forward.begin(), D.forward.end(), [](const Op& o) { return o.name.ends_with(".amax"); }));
    // Tensorwise: a 4-byte TP all-reduce for each gathered input (attention, MLP) and each gathered gradient.
    p.fp8_recipe = Fp8Recipe::tensorwise;
    CHECK(chunk_ops(p, 10).forward.empty());
    const LayerOps L = layer_ops(dense_model(), p);
    CHECK(find_op(L.forward, "sp.all_gather.attn.amax").comm_bytes == 4);
    CHECK(find_op(L.forward, "sp.all_gather.mlp.amax").group == CommGroup::tp);
    CHECK(find_op(L.backward, "tp.reduce.mlp.bwd.amax").comm == CommKind::all_reduce);
    p.fp8_recipe = Fp8Recipe::blockwise;
    const LayerOps K = layer_ops(dense_model(), p);
    CHECK(std::none_of(K.forward.begin(), K.forward.end(), [](const Op& o) { return o.kind == OpKind::collective &&
                                                                                    o.comm_bytes == 4; }));
}

TEST_CASE("the search adds neither int8 nor fp4; a scenario that asks for one keeps it") {
    const ModelSpec m = dense_model();
    ParallelPlan base = plan_in(Precision::bf16);
    const SystemSpec v5e = test::catalog().tpu_system("v5litepod-16", 1, "t", "$");
    CHECK(default_plan_space(m, v5e, base).precision == std::vector<Precision>{Precision::bf16});
    const SystemSpec a4 = test::catalog().gpu_system("a4-highgpu-8g", 1, "t", "$");
    CHECK(default_plan_space(m, a4, base).precision == std::vector<Precision>{Precision::bf16, Precision::fp8});
    base.precision = Precision::int8;
    CHECK(default_plan_space(m, v5e, base).precision == std::vector<Precision>{Precision::int8});
    base.precision = Precision::fp4;
    CHECK(default_plan_space(m, a4, base).precision == std::vector<Precision>{Precision::fp4, Precision::fp8});
}

TEST_CASE("the engine and the closed form agree on int8, fp4 and every fp8 recipe") {
    struct Case {
        std::string scenario;
        Precision precision;
        Fp8Recipe recipe;
    };
    const std::vector<Case> cases = {
        {"llama3-405b-v5p.json", Precision::int8, Fp8Recipe::delayed},
        {"gpt3-175b-128xa3-mega.json", Precision::fp8, Fp8Recipe::delayed},
        {"gpt3-175b-128xa3-mega.json", Precision::fp8, Fp8Recipe::tensorwise},
        {"gpt3-175b-128xa3-mega.json", Precision::fp8, Fp8Recipe::blockwise},
        {"mixtral-8x22b-32xa3-mega.json", Precision::fp8, Fp8Recipe::delayed},
    };
    for (const Case& c : cases) {
        Scenario s = load_scenario(test::scenario(c.scenario), test::catalog());
        s.plan.precision = c.precision, s.plan.fp8_recipe = c.recipe;
        const StepResult r = simulate_step(s.model, s.system, s.plan);
        REQUIRE_MESSAGE(r.feasible, c.scenario);
        StepEstimator est(s.model, s.system);
        const StepEstimate e = est.estimate(s.plan);
        REQUIRE(e.feasible());
        INFO(c.scenario << " " << to_string(c.precision) << " " << to_string(c.recipe));
        CHECK(std::fabs(e.step_time_s / r.step_time_s - 1) < 0.01);
        // MFU stays on the dense bf16 peak.
        CHECK(r.peak_flops_per_s == approx(s.system.chip.peak_bf16_flops_per_s));
    }
    // fp4 on an A4 (B200) system: the GPT-3 scenario's model and plan on 128 A4 VMs.
    Scenario s = load_scenario(test::scenario("gpt3-175b-128xa3-mega.json"), test::catalog());
    s.system = test::catalog().gpu_system("a4-highgpu-8g", 128, "t", "$");
    s.plan.precision = Precision::fp4;
    const StepResult r = simulate_step(s.model, s.system, s.plan);
    REQUIRE(r.feasible);
    StepEstimator est(s.model, s.system);
    CHECK(std::fabs(est.estimate(s.plan).step_time_s / r.step_time_s - 1) < 0.01);
    // fp4 is faster than fp8 on the same plan, and MFU (against bf16) may pass 1 but not 4 (fp4's peak ratio).
    s.plan.precision = Precision::fp8;
    CHECK(simulate_step(s.model, s.system, s.plan).step_time_s > r.step_time_s);
    CHECK(r.mfu < 4);
}

TEST_CASE("a delayed-scaling fp8 plan pays one amax all-reduce per model chunk and pass, exposed") {
    Scenario s = load_scenario(test::scenario("gpt3-175b-128xa3-mega.json"), test::catalog());
    s.plan.precision = Precision::fp8;
    s.plan.fp8_recipe = Fp8Recipe::delayed;
    const CollectiveTimer timer(s.system, NetworkBackend::analytical);
    const StepCosts d = price_step(s.model, s.system, s.plan, timer);
    s.plan.fp8_recipe = Fp8Recipe::blockwise;
    const StepCosts b = price_step(s.model, s.system, s.plan, timer);
    // The chunk's exposed communication differs by the reductions (blockwise has none; its casts are not
    // communication).
    REQUIRE(d.chunks.size() == b.chunks.size());
    CHECK(d.chunk(0, 0).fwd_exposed_s > b.chunk(0, 0).fwd_exposed_s);
    const auto& ops = d.layer_forward;
    CHECK(std::any_of(ops.begin(), ops.end(),
                      [](const OpTiming& t) { return t.name == "fp8.amax_reduce.tp (per chunk)"; }));
}

TEST_CASE("training.precision takes int8 and fp4, training.fp8_recipe its three recipes; bad values name file and path") {
    Json j = load_json_file(test::scenario("llama3-405b-v5p.json"));
    j["training"]["precision"] = "int8";
    CHECK(scenario_from_json(j, "s.json", test::catalog()).plan.precision == Precision::int8);
    j["training"]["precision"] = "fp4";
    CHECK(scenario_from_json(j, "s.json", test::catalog()).plan.precision == Precision::fp4);
    j["training"]["precision"] = "int4";
    CHECK_THROWS_WITH_AS(scenario_from_json(j, "s.json", test::catalog()),
                         doctest::Contains("s.json: $.training.precision: expected one of"), InputError);
    j["training"]["precision"] = "fp8";
    j["training"]["fp8_recipe"] = "tensorwise";
    CHECK(scenario_from_json(j, "s.json", test::catalog()).plan.fp8_recipe == Fp8Recipe::tensorwise);
    j["training"]["fp8_recipe"] = "mxfp4";
    CHECK_THROWS_WITH_AS(scenario_from_json(j, "s.json", test::catalog()),
                         doctest::Contains("s.json: $.training.fp8_recipe: expected one of"), InputError);
}

TEST_CASE("a published record's precision text: int8 or AQT reads as int8, fp4 or NVFP4 as fp4, torchao's Float8 as "
          "fp8; a text naming no format is an error") {
    Json run = test::published_record(test::shared("validation/published_runs.json"), "maxtext-v5e-16b-1xv5e-256");
    const std::string file = test::temp_dir() + "/precision_runs.json";
    const std::vector<std::pair<const char*, Precision>> texts = {
        {"int8 (AQT)", Precision::int8}, {"AQT quantized training", Precision::int8}, {"NVFP4", Precision::fp4},
        {"fp4 with fp8 fallback", Precision::fp4}, {"fp8 (TE hybrid)", Precision::fp8}, {"bf16", Precision::bf16},
        {"Float8 (torchao Float8Linear)", Precision::fp8}, {"bfloat16 mixed precision", Precision::bf16},
        {"float16 with loss scaling", Precision::fp16}};
    for (const auto& entry : texts) {
        // Not a structured binding: clang 14 cannot capture one in CHECK_MESSAGE's lambda (the CI ASan build).
        const char* text = entry.first;
        const Precision want = entry.second;
        run["settings"]["precision"] = text;
        test::write_file(file, Json::array({run}).dump());
        const auto runs = load_published_runs(file, test::catalog());
        REQUIRE(runs.size() == 1);
        CHECK_MESSAGE(runs[0].plan.precision == want, text);
    }
    // Not a silent bf16: the record is an error row naming the file, the path and what was expected.
    run["settings"]["precision"] = "mixed precision";
    test::write_file(file, Json::array({run}).dump());
    const auto bad = load_published_runs(file, test::catalog());
    REQUIRE(bad.size() == 1);
    CHECK(bad[0].error.find("precision_runs.json: $[0].settings.precision: expected a precision that names bf16") !=
          std::string::npos);
}

TEST_CASE("reports say MFU is measured against the dense bf16 peak whatever the precision") {
    CHECK(std::string(kMfuConvention).find("dense 16-bit (bf16) peak whatever precision") != std::string::npos);
    const auto run = test::run_podsim("run " + test::scenario("gpt3-175b-128xa3-mega.json") + " --format json");
    REQUIRE(run.exit_code == 0);
    const Json j = Json::parse(run.out);
    CHECK(j.at("mfu_convention").get<std::string>().find("whatever precision") != std::string::npos);
    CHECK(j.at("peak").at("name").get<std::string>().find("dense bf16 peak") != std::string::npos);
}

TEST_CASE("the catalog says which chips write GEMM outputs after the K loop: Ampere does, Hopper, Blackwell, TPUs don't") {
    for (const char* id : {"a100-sxm-80gb", "a100-sxm-40gb"})
        CHECK_MESSAGE(test::catalog().find_chip(id)->eff.gemm_epilogue_serial, id);
    for (const char* id : {"h100-sxm", "h200-sxm", "b200", "gb200", "tpu-v4", "tpu-v5p", "tpu7x", "host-cpu"})
        CHECK_MESSAGE(!test::catalog().find_chip(id)->eff.gemm_epilogue_serial, id);
}

TEST_CASE("a serial epilogue adds M x N x 2 bytes at the streaming bandwidth to a GEMM; an overlapped one adds none") {
    const ChipSpec& a100 = *test::catalog().find_chip("a100-sxm-80gb");
    REQUIRE(a100.eff.gemm_epilogue_serial);
    ChipSpec overlapped = a100;
    overlapped.eff.gemm_epilogue_serial = false;
    ParallelPlan p;
    p.micro_batch = 1, p.global_batch = 1;
    const LayerOps L = layer_ops(dense_model(), p);
    const double bw = a100.hbm_bytes_per_s * a100.eff.memory_bw_fraction;
    const Op& up = find_op(L.forward, "mlp.up");
    const Op& down = find_op(L.forward, "mlp.down");
    REQUIRE(up.flops == approx(down.flops));
    // mlp.up writes 2048 x 16384 bf16 elements (64 MiB): 39 us at 85% of 2,039 GB/s, 3% of its 1.2 ms of math.
    CHECK(op_s(up, a100, p) - op_s(up, overlapped, p) == approx(2048.0 * 16384 * 2 / bw));
    // mlp.down writes a quarter of that: the short-output GEMM pays a quarter of the epilogue.
    CHECK(op_s(down, a100, p) - op_s(down, overlapped, p) == approx(2048.0 * 4096 * 2 / bw));
    // Both passes of the backward pay theirs too: the input gradient of mlp.up is 2048 x 4096, its weight gradient
    // 4096 x 16384.
    const Op& dgrad = find_op(L.backward, "mlp.up.dgrad");
    const Op& wgrad = find_op(L.backward, "mlp.up.wgrad");
    CHECK(op_s(dgrad, a100, p) - op_s(dgrad, overlapped, p) == approx(2048.0 * 4096 * 2 / bw));
    CHECK(op_s(wgrad, a100, p) - op_s(wgrad, overlapped, p) == approx(4096.0 * 16384 * 2 / bw));
}
