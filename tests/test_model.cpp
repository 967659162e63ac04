// The transformer workload: parameter counts against published models, FLOPs against the closed forms.
#include <doctest/doctest.h>

#include "models/layer_ops.hpp"
#include "models/memory.hpp"
#include "models/published_run.hpp"
#include "tests/helpers.hpp"

using namespace podsim;
using podsim::test::approx;

namespace {
ModelSpec gpt(int layers, long long h, int heads, long long vocab = 51200, long long seq = 2048) {
    ModelSpec m;
    m.name = "gpt";
    m.layers = layers, m.hidden = h, m.ffn_hidden = 4 * h, m.heads = heads, m.kv_heads = heads, m.head_dim = h / heads;
    m.vocab = vocab, m.seq_len = seq;
    return m;
}
}  // namespace

TEST_CASE("parameter counts of the published runs agree with their published sizes within 3%") {
    // Published sizes are rounded ("175B") or estimated by the source; 3% covers the rounding.
    for (const auto& run : load_published_runs(test::shared("validation/published_runs.json"), test::catalog())) {
        const double ours = run.model.total_params() / 1e9;
        CHECK_MESSAGE(std::abs(ours / run.published_params_b - 1) < 0.03,
                      run.id << ": " << ours << "B vs published " << run.published_params_b << "B");
    }
}

TEST_CASE("GPT-3 175B has 174.6B parameters (Brown et al. 2020, Table 2.1 rounds to 175.0B)") {
    ModelSpec m = gpt(96, 12288, 96, 50257);
    m.tied_embeddings = true;
    CHECK(m.total_params() / 1e9 == approx(174.6).epsilon(0.002));
}

TEST_CASE("a GPT layer's forward is 24 b s h^2 + 4 b s^2 h FLOPs (Narayanan et al. 2021, eq. 2 over 3)") {
    ModelSpec m = gpt(1, 4096, 32);
    m.bias = false;
    ParallelPlan p;
    p.micro_batch = 2;
    p.attention = AttentionKernel::standard;  // full s^2 attention, as the formula counts
    const double b = 2, s = 2048, h = 4096;
    CHECK(total_flops(layer_ops(m, p).forward) == approx(24 * b * s * h * h + 4 * b * s * s * h));
    // Backward is twice the forward; full recomputation adds one more forward.
    const LayerOps L = layer_ops(m, p);
    CHECK(total_flops(L.backward) == approx(2 * total_flops(L.forward)));
    p.recompute = Recompute::full;
    CHECK(total_flops(layer_ops(m, p).recompute) == approx(total_flops(L.forward)));
}

TEST_CASE("tensor parallelism divides a layer's FLOPs across the group") {
    ModelSpec m = gpt(1, 8192, 64);
    ParallelPlan p1, p8;
    p8.tp = 8;
    CHECK(total_flops(layer_ops(m, p8).forward) == approx(total_flops(layer_ops(m, p1).forward) / 8));
}

TEST_CASE("without sequence parallelism a Megatron layer does 2 TP all-reduces forward, with it AG+RS pairs") {
    ModelSpec m = gpt(1, 8192, 64);
    ParallelPlan p;
    p.tp = 8;
    auto count = [](const std::vector<Op>& ops, CommKind k) {
        int n = 0;
        for (const auto& o : ops) n += o.kind == OpKind::collective && o.comm == k;
        return n;
    };
    CHECK(count(layer_ops(m, p).forward, CommKind::all_reduce) == 2);
    p.sp = true;
    CHECK(count(layer_ops(m, p).forward, CommKind::all_gather) == 2);
    CHECK(count(layer_ops(m, p).forward, CommKind::reduce_scatter) == 2);
}

TEST_CASE("activation memory per layer is s b h (34 + 5 a s / h) bytes at t = 1 (Korthikanti et al. 2022, eq. 1)") {
    ModelSpec m = gpt(1, 4096, 32);
    ParallelPlan p;
    p.micro_batch = 4;
    p.attention = AttentionKernel::standard;
    const double s = 2048, b = 4, h = 4096, a = 32;
    CHECK(layer_activation_bytes(m, p) == approx(s * b * h * (34 + 5 * a * s / h)));
    p.tp = 8, p.sp = true;  // eq. 6: everything divided by t
    CHECK(layer_activation_bytes(m, p) == approx(s * b * h * (34 + 5 * a * s / h) / 8));
    p.recompute = Recompute::selective;  // eq. 7: 34 s b h / t
    CHECK(layer_activation_bytes(m, p) == approx(s * b * h * 34 / 8));
    p.recompute = Recompute::full;  // only the layer input, 2 s b h (sharded by SP)
    CHECK(layer_activation_bytes(m, p) == approx(2 * s * b * h / 8));
}

TEST_CASE("ZeRO stages shard optimizer states, then gradients, then weights") {
    ModelSpec m = gpt(24, 2048, 16);
    const ChipSpec& chip = *test::catalog().find_chip("a100-sxm-80gb");
    MemoryInputs in;
    in.stage_params = m.total_params();
    in.layers_on_stage = m.layers;
    in.zero_shard = 8;
    ParallelPlan p;
    p.dp = 8;
    auto z0 = memory_per_device(m, p, chip, in);
    p.zero = 1;
    auto z1 = memory_per_device(m, p, chip, in);
    CHECK(z1.optimizer_bytes == approx(z0.optimizer_bytes / 8));
    CHECK(z1.gradients_bytes == approx(z0.gradients_bytes));
    p.zero = 2;
    CHECK(memory_per_device(m, p, chip, in).gradients_bytes == approx(z0.gradients_bytes / 8));
    p.zero = 3;
    CHECK(memory_per_device(m, p, chip, in).weights_bytes < z0.weights_bytes / 4);
}

TEST_CASE("memory: the loss phase and a layer's recomputation are transients of different phases: the peak holds the larger") {
    const ModelSpec m = gpt(24, 4096, 32, 51200, 2048);
    const ChipSpec chip = *test::catalog().find_chip("H100");
    MemoryInputs in;
    in.stage_params = m.total_params();
    in.layers_on_stage = m.layers;
    ParallelPlan p;
    p.micro_batch = 4, p.recompute = Recompute::full;
    const double T = 4.0 * 2048;
    const double logits = T * 51200 * (2 + 4);  // 16-bit logits and their fp32 softmax / gradient buffer
    ParallelPlan none = p;
    none.recompute = Recompute::none;
    const double layer = layer_activation_bytes(m, none);
    in.last_stage = true;
    CHECK(memory_per_device(m, p, chip, in).transient_bytes == approx(std::max(logits, layer)));
    in.last_stage = false;
    CHECK(memory_per_device(m, p, chip, in).transient_bytes == approx(layer));
}

TEST_CASE("memory: minimal recomputation keeps Q/K/V, the projection and the MLP up outputs, not the down projection's") {
    const ModelSpec m = gpt(24, 4096, 32, 51200, 2048);
    ParallelPlan p;
    p.micro_batch = 1, p.recompute = Recompute::minimal;
    const double T = 2048, h = 4096;
    // input + Q, K, V (3h) + the MLP up output (4h) + the projection output (h), 2 bytes each
    CHECK(layer_activation_bytes(m, p) == approx(2 * T * (h + 3 * h + 4 * h + h)));
    // XLA computes the activation inside the down GEMM's operand: one 4h tensor fewer without recomputation.
    ParallelPlan q;
    q.micro_batch = 1;
    ParallelPlan fused = q;
    fused.act_fused_into_gemm = true;
    CHECK(layer_activation_bytes(m, q) - layer_activation_bytes(m, fused) == approx(2 * T * 4 * h));
}

TEST_CASE("full TP overlap splits the GEMMs that meet a TP collective into one piece per TP rank") {
    const ModelSpec m = gpt(24, 4096, 32);
    ParallelPlan p;
    p.tp = 4, p.sp = true, p.tp_comm_overlap = TpOverlap::full;
    auto find = [](const std::vector<Op>& ops, const std::string& name) {
        for (const auto& o : ops)
            if (o.name == name) return o;
        FAIL("no op " << name);
        return Op{};
    };
    LayerOps L = layer_ops(m, p);
    for (const char* n : {"qkv", "attn.proj", "mlp.up", "mlp.down"}) CHECK(find(L.forward, n).chunks == 4);
    CHECK(find(L.backward, "mlp.up.dgrad").chunks == 4);
    CHECK(find(L.backward, "mlp.up.wgrad").chunks == 1);  // its overlap is a bulk one
    p.tp_comm_overlap = TpOverlap::backward;
    L = layer_ops(m, p);
    CHECK(find(L.forward, "qkv").chunks == 1);
}

TEST_CASE("a scenario model's unstated conventions follow its family; without one, Llama-style, activation stated") {
    auto load = [](const std::string& text) {
        const podsim::Json j = podsim::Json::parse(text);
        return podsim::model_from_json(podsim::JsonObject(j, "s.json", "$.model"));
    };
    const std::string shape =
        R"("name": "m", "layers": 2, "hidden": 256, "ffn_hidden": 1024, "heads": 4, "vocab": 1000, "seq_len": 128)";
    const auto gpt = load("{" + shape + R"(, "family": "gpt"})");
    CHECK(gpt.bias);
    CHECK(gpt.dropout);
    CHECK(gpt.norm == podsim::Norm::layernorm);
    CHECK(gpt.position == podsim::Position::learned);
    CHECK(gpt.tied_embeddings);
    CHECK(gpt.activation == podsim::Activation::gelu);
    const auto gemma = load("{" + shape + R"(, "family": "gemma"})");
    CHECK(gemma.activation == podsim::Activation::geglu);
    CHECK(gemma.tied_embeddings);
    const auto plain = load("{" + shape + R"(, "activation": "swiglu"})");
    CHECK_FALSE(plain.bias);
    CHECK_FALSE(plain.dropout);
    CHECK(plain.norm == podsim::Norm::rmsnorm);
    CHECK(plain.position == podsim::Position::rope);
    // A stated field wins over the family's convention.
    CHECK_FALSE(load("{" + shape + R"(, "family": "gpt", "bias": false})").bias);
    CHECK_THROWS_WITH(load("{" + shape + "}"), doctest::Contains("$.model.activation"));
    CHECK_THROWS_WITH(load("{" + shape + R"(, "family": "bert"})"), doctest::Contains("$.model.family"));
}
