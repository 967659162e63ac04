// Recomputation by named tensors (MaxText's remat policies: jax.checkpoint save_only_these_names and
// save_and_offload_only_these_names, issue 12 item 1): what each policy keeps, what the backward then runs again under
// XLA's autodiff (only what it needs: never a dense MLP's down projection), and what it holds on the device and in
// host memory. Every expected value is a sum of the layer's own GEMM FLOPs or tensor sizes, read off its shapes.
#include <doctest/doctest.h>

#include <algorithm>

#include "hardware/input_error.hpp"
#include "models/layer_ops.hpp"
#include "models/memory.hpp"
#include "models/published_run.hpp"
#include "tests/helpers.hpp"

using namespace podsim;
using podsim::test::approx;

namespace {

ParallelPlan named_plan(const char* policy) {
    ParallelPlan p;
    p.dp = 8, p.zero = 3, p.micro_batch = 1, p.global_batch = 8;
    const auto r = maxtext_remat_policy(policy);
    REQUIRE_MESSAGE(r, policy);
    p.recompute = r->recompute, p.remat = r->names;
    return p;
}

double flops_of(const std::vector<Op>& ops, const std::string& name) {
    double f = 0;
    for (const auto& o : ops)
        if (o.name == name) f += o.flops;
    return f;
}
bool has_op(const std::vector<Op>& ops, const std::string& name) {
    return std::any_of(ops.begin(), ops.end(), [&](const Op& o) { return o.name == name; });
}
double gemm_flops(const std::vector<Op>& ops) {
    double f = 0;
    for (const auto& o : ops)
        if (o.kind == OpKind::matmul || o.kind == OpKind::attention) f += o.flops;
    return f;
}

}  // namespace

TEST_CASE("MaxText's remat policy names: what each keeps (decoders.py get_remat_policy)") {
    CHECK(maxtext_remat_policy("full")->recompute == Recompute::full);
    CHECK(maxtext_remat_policy("minimal")->recompute == Recompute::minimal);
    CHECK_FALSE(maxtext_remat_policy("save_everything"));
    CHECK(to_string(maxtext_remat_policy("save_dot_except_mlp")->names) == "decoder_layer_input,qkv_proj,out_proj");
    CHECK(to_string(maxtext_remat_policy("save_dot_except_mlpwi")->names) ==
          "decoder_layer_input,qkv_proj,out_proj,mlpwo");
    CHECK(to_string(maxtext_remat_policy("save_qkv_proj")->names) == "decoder_layer_input,qkv_proj");
    CHECK(to_string(maxtext_remat_policy("minimal_with_context")->names) ==
          "decoder_layer_input,qkv_proj,context,out_proj,mlpwi,mlpwo");
    CHECK(to_string(maxtext_remat_policy("qkv_proj_offloaded")->names) == "decoder_layer_input; offloaded: qkv_proj");
    // The experts' gate and down outputs carry the dense names too (moe.py), so the dense policies keep them.
    const RematNames dots = maxtext_remat_policy("save_dot_except_mlpwi")->names;
    CHECK(dots.kept(RematTensor::moe_wo));
    CHECK_FALSE(dots.kept(RematTensor::moe_wi_0));
    CHECK(maxtext_remat_policy("minimal_with_context")->names.kept(RematTensor::moe_wi_0));
    CHECK_FALSE(maxtext_remat_policy("minimal_with_context")->names.kept(RematTensor::moe_wi_1));
}

TEST_CASE("a named policy runs again what the backward needs and the policy does not keep, never the MLP's down GEMM") {
    const ModelSpec m = test::llama3_8b();
    const LayerOps none = layer_ops(m, named_plan("minimal_with_context"));
    const auto& F = none.forward;
    const double qkv = flops_of(F, "qkv"), proj = flops_of(F, "attn.proj"), up = flops_of(F, "mlp.up");
    const double attn = flops_of(F, "flash_attention");
    REQUIRE(qkv > 0);
    REQUIRE(proj > 0);
    REQUIRE(up > 0);
    REQUIRE(attn > 0);

    // Keeping every GEMM output and the attention output leaves only the elementwise ops to run again.
    CHECK(gemm_flops(none.recompute) == 0);
    CHECK(has_op(none.recompute, "norm2"));

    // save_dot_except_mlp keeps Q/K/V and the projection: the attention and the MLP's up GEMM run again. Its down
    // GEMM's output is no residual of the backward, so save_dot_except_mlpwi (which keeps it) recomputes the same.
    for (const char* policy : {"save_dot_except_mlp", "save_dot_except_mlpwi"}) {
        CAPTURE(policy);
        const LayerOps L = layer_ops(m, named_plan(policy));
        CHECK(gemm_flops(L.recompute) == approx(up + attn));
        CHECK_FALSE(has_op(L.recompute, "mlp.down"));
        CHECK_FALSE(has_op(L.recompute, "qkv"));
    }
    // save_qkv_proj adds the projection; full recomputation (Megatron-style: the whole layer) adds Q/K/V and down.
    CHECK(gemm_flops(layer_ops(m, named_plan("save_qkv_proj")).recompute) == approx(proj + up + attn));
    const double down = flops_of(F, "mlp.down");
    CHECK(gemm_flops(layer_ops(m, named_plan("full")).recompute) == approx(qkv + proj + up + down + attn));

    // Keeping only the queries: the keys' and values' share of the fused QKV GEMM runs again (GQA: 2 x 1024 of 6144).
    ParallelPlan custom = named_plan("custom");
    custom.remat.device |= 1u << unsigned(RematTensor::query);
    const LayerOps C = layer_ops(m, custom);
    CHECK(flops_of(C.recompute, "qkv") == approx(qkv * 2048.0 / 6144.0));
}

TEST_CASE("a named policy holds its kept tensors on the device and its offloaded ones in host memory") {
    const ModelSpec m = test::llama3_8b();
    const double T = 8192, h = 4096;
    ParallelPlan p = named_plan("custom");
    // The layer input offloaded, the queries on the device, the attention output offloaded.
    p.remat.device = 1u << unsigned(RematTensor::query);
    p.remat.offload = 1u << unsigned(RematTensor::layer_input) | 1u << unsigned(RematTensor::context);
    CHECK(layer_activation_bytes(m, p) == approx(2 * T * 4096));
    // A dense MLP's down output is no residual of the backward: naming it keeps nothing more.
    ParallelPlan wo = p;
    wo.remat.device |= 1u << unsigned(RematTensor::mlp_wo);
    CHECK(layer_activation_bytes(m, wo) == approx(2 * T * 4096));

    MemoryInputs in;
    in.stage_params = 8e9, in.layers_on_stage = 32, in.zero_shard = 8;
    const ChipSpec* v6e = test::catalog().find_chip("tpu-v6e");
    REQUIRE(v6e != nullptr);
    const MemoryBreakdown mem = memory_per_device(m, p, *v6e, in);
    // Per layer: the 16-bit input (T x h) and the attention output with its fp32 log-sum-exp per head.
    CHECK(mem.host_offload_bytes == approx(32 * (2 * T * h + T * 32 * (2 * 128 + 4))));
    CHECK(mem.activations_bytes == approx(32 * 2 * T * 4096));
    // The TPU catalog states no host memory: the offload is not refused for it.
    CHECK(mem.host_bytes == 0);
}

TEST_CASE("remat_policy=custom reads each tensor's place; a name or place MaxText lacks is an error naming its path") {
    auto record = [](Json tensors, const char* policy = "remat_policy=custom", const char* precision = "bf16") {
        Json r = Json::parse(R"({"id": "named", "model": {"layers": 32, "hidden": 4096, "ffn_hidden": 14336,
            "heads": 32, "kv_heads": 8, "head_dim": 128, "vocab": 128256, "seq_len": 8192, "params_b": 8.0,
            "arch": "Llama 3 dense: SwiGLU, RMSNorm, RoPE, GQA, no biases, untied output layer"},
            "hardware": {"chip": "TPU-v6e", "count": 8}, "parallel": {"dp": 8, "tp": 1, "pp": 1, "cp": 1, "zero": 3},
            "batch": {"global_batch_seqs": 8, "micro_batch": 1, "grad_accum": 1},
            "settings": {"precision": "bf16", "framework": "MaxText"}, "step_time_s": 3.0})");
        r["settings"]["recompute"] = policy;
        r["settings"]["precision"] = precision;
        if (!tensors.is_null()) r["settings"]["remat_tensors"] = tensors;
        const std::string path = test::temp_dir() + "/remat-names.json";
        test::write_file(path, Json::array({r}).dump());
        return load_published_runs(path, test::catalog()).at(0);
    };
    const PublishedRun ok = record(Json{{"decoder_layer_input", "offload"}, {"query_proj", "device"}, {"out_proj", "remat"}});
    REQUIRE_MESSAGE(ok.error.empty(), ok.error);
    CHECK(ok.plan.recompute == Recompute::names);
    CHECK(to_string(ok.plan.remat) == "query_proj; offloaded: decoder_layer_input");
    // "untied output layer" is not "tied embeddings".
    CHECK_FALSE(ok.model.tied_embeddings);

    CHECK(record(Json{{"query_projection", "device"}}).error.find("settings.remat_tensors.query_projection") !=
          std::string::npos);
    CHECK(record(Json{{"query_proj", "hbm"}}).error.find("settings.remat_tensors.query_proj") != std::string::npos);
    CHECK(record(Json{{"decoder_layer_input", "remat"}}).error.find("decoder_layer_input") != std::string::npos);
    CHECK(record(Json()).error.find("settings.remat_tensors") != std::string::npos);
    CHECK(record(Json(), "remat_policy=save_everything").error.find("settings.recompute") != std::string::npos);
    // One tensor named twice must have one place; base.yml's names podsim does not price are accepted only as remat.
    CHECK(record(Json{{"qkv_proj", "offload"}, {"query_proj", "device"}}).error.find("remat_tensors.qkv_proj") !=
          std::string::npos);
    CHECK(record(Json{{"mla_kv", "device"}}).error.find("settings.remat_tensors.mla_kv") != std::string::npos);
    CHECK(record(Json{{"mla_kv", "remat"}, {"query_proj", "device"}}).error.empty());
    // MaxText's "none" is no policy, and nn.remat without one saves nothing.
    CHECK(record(Json(), "remat_policy=none").plan.recompute == Recompute::full);
    const PublishedRun preset = record(Json(), "remat_policy=save_dot_except_mlpwi");
    REQUIRE(preset.error.empty());
    CHECK(preset.plan.remat == maxtext_remat_policy("save_dot_except_mlpwi")->names);
    // MaxText weight_dtype=bfloat16: one bf16 copy of the weights, bf16 gradients, AdamW moments in bf16.
    const PublishedRun bf16w = record(Json(), "remat_policy=full", "bf16 (dtype bfloat16; weight_dtype bfloat16)");
    REQUIRE(bf16w.error.empty());
    CHECK(bf16w.plan.master_weight_bytes == 2);
    CHECK(bf16w.plan.optimizer_state_bytes == 4);
    CHECK(bf16w.plan.grad_reduce_bytes == 2);
    CHECK_FALSE(bf16w.plan.compute_weight_copy);
}

TEST_CASE("full recomputation under JAX reruns only what the backward uses; PyTorch checkpointing the whole layer") {
    const ModelSpec m = test::llama3_8b();
    ParallelPlan p = named_plan("full");
    const LayerOps whole = layer_ops(m, p);
    const auto& F = whole.forward;
    const double down = flops_of(F, "mlp.down");
    REQUIRE(down > 0);
    p.recompute_needed_only = true;  // jax.checkpoint: the recomputed program is dead-code eliminated
    const LayerOps jax = layer_ops(m, p);
    CHECK(gemm_flops(jax.recompute) == approx(gemm_flops(whole.recompute) - down));
    CHECK_FALSE(has_op(jax.recompute, "mlp.down"));
    CHECK(has_op(whole.recompute, "mlp.down"));
}

TEST_CASE("the loss phase holds fp32 softmax buffers unless XLA fuses them into the output layer's GEMMs") {
    const ModelSpec m = test::llama3_8b();
    ParallelPlan p;
    p.dp = 8, p.zero = 3, p.micro_batch = 1, p.global_batch = 8;
    MemoryInputs in;
    in.stage_params = 8e9, in.layers_on_stage = 32, in.zero_shard = 8;
    const ChipSpec* v6e = test::catalog().find_chip("tpu-v6e");
    REQUIRE(v6e != nullptr);
    const double logits = 8192.0 * 128256;  // one micro-batch's tokens x vocabulary
    CHECK(memory_per_device(m, p, *v6e, in).transient_bytes == approx(logits * (2 + 4)));
    p.act_fused_into_gemm = true;
    CHECK(memory_per_device(m, p, *v6e, in).transient_bytes == approx(logits * 2));
}

TEST_CASE("a scenario names a MaxText policy in training.recompute, custom with training.remat_tensors") {
    const Json par = Json::object(), bat = Json{{"global_batch_seqs", 8}, {"micro_batch", 1}};
    auto plan = [&](const Json& tr) {
        return plan_from_json(JsonObject(par, "s.json", "$.parallel"), JsonObject(bat, "s.json", "$.batch"),
                              JsonObject(tr, "s.json", "$.training"));
    };
    const PartialPlan preset = plan(Json{{"recompute", "save_qkv_proj"}});
    CHECK(preset.plan.recompute == Recompute::names);
    CHECK(preset.plan.remat == maxtext_remat_policy("save_qkv_proj")->names);
    const PartialPlan custom = plan(Json{{"recompute", "custom"}, {"remat_tensors", {{"mlpwo", "offload"}}}});
    CHECK(to_string(custom.plan.remat) == "decoder_layer_input; offloaded: mlpwo");
    CHECK(recompute_label(custom.plan) == "names(decoder_layer_input; offloaded: mlpwo)");
    auto error = [&](const Json& tr) {
        try {
            plan(tr);
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK(error(Json{{"recompute", "custom"}}).find("$.training.remat_tensors") != std::string::npos);
    CHECK(error(Json{{"recompute", "full"}, {"remat_tensors", {{"mlpwo", "offload"}}}}).find("remat_tensors") !=
          std::string::npos);
}
