#include "models/published_run.hpp"

#include <algorithm>
#include <cmath>

namespace podsim {

namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}
bool has(const std::string& text, const char* word) { return lower(text).find(word) != std::string::npos; }

PublishedRun read_run(const JsonObject& o, const Catalog& cat) {
    PublishedRun r;
    r.id = o.string("id");
    auto mo = o.object("model");
    auto hw = o.object("hardware");
    auto par = o.object("parallel");
    auto bat = o.object("batch");
    auto set = o.object("settings");
    const std::string arch = mo.opt_string("arch").value_or("");
    const std::string framework = set.opt_string("framework").value_or("");
    const bool nemo = has(framework, "nemo");
    const bool xla = has(framework, "jax") || has(framework, "maxtext");
    const bool megatron_2021 = has(framework, "megatron-lm") || has(framework, "calculon") || has(arch, "gpt-2/3");
    const bool llama = has(arch, "llama");

    ModelSpec& m = r.model;
    m.name = mo.opt_string("name").value_or(r.id);
    m.layers = static_cast<int>(mo.positive_int("layers"));
    m.hidden = mo.positive_int("hidden");
    m.ffn_hidden = mo.positive_int("ffn_hidden");
    m.heads = static_cast<int>(mo.positive_int("heads"));
    m.kv_heads = static_cast<int>(mo.positive_int("kv_heads"));
    m.head_dim = mo.positive_int("head_dim");
    m.seq_len = mo.positive_int("seq_len");
    m.vocab = mo.positive_int("vocab");
    if (auto e = mo.opt_object("moe")) read_moe(*e, m);
    if (auto a = mo.opt_object("mla")) read_mla(*a, mo, m);
    r.published_params_b = mo.positive("params_b");
    if (has(arch, "swiglu") || llama) m.activation = Activation::swiglu;
    else if (has(arch, "squared-relu") || has(arch, "squared relu")) m.activation = Activation::squared_relu;
    else if (has(arch, "relu")) m.activation = Activation::relu;
    else m.activation = Activation::gelu;
    m.parallel_block = has(arch, "parallel");
    // GPT-2/3 and Megatron/NeMo GPT share the input embedding with the output layer; Llama and Nemotron do not.
    m.tied_embeddings = has(arch, "tied") || has(arch, "shared in/out") || (has(arch, "gpt") && !llama);
    m.bias = megatron_2021 || (has(arch, "gpt") && !xla);
    if (has(arch, "no biases")) m.bias = false;
    m.norm = llama || has(arch, "rmsnorm") ? Norm::rmsnorm : Norm::layernorm;
    m.position = has(arch, "learned pos") || has(arch, "gpt-3") || has(arch, "gpt-2") ? Position::learned
                                                                                        : Position::rope;
    // Megatron-LM's GPT examples train with dropout 0.1; NeMo's performance configs, Llama, PaLM and MaxText use 0.
    m.dropout = megatron_2021 && !nemo;
    r.assumptions.push_back(std::string("dropout ") + (m.dropout ? "0.1 (Megatron-LM GPT default)" : "off"));

    // --- system -------------------------------------------------------------------------------------------------
    const std::string chip_name = hw.string("chip");
    const ChipSpec* chip = cat.find_chip(chip_name);
    if (!chip) hw.fail("chip", "unknown chip \"" + chip_name + "\"");
    const int count = static_cast<int>(hw.positive_int("count"));
    const int dp = static_cast<int>(par.positive_int("dp")), tp = static_cast<int>(par.positive_int("tp"));
    const int pp = static_cast<int>(par.positive_int("pp"));
    const int cp = static_cast<int>(par.has("cp") ? par.positive_int("cp") : 1);
    const int fsdp = static_cast<int>(par.has("fsdp_degree") ? par.positive_int("fsdp_degree") : 1);
    int dp_total = dp;
    int slices = 1;
    if (dp * tp * pp * cp != count && dp * fsdp * tp * pp * cp == count) {
        dp_total = dp * fsdp;  // MaxText: dp counts slices (DCN), fsdp_degree shards inside each slice (ICI)
        slices = dp;
    }
    if (dp_total * tp * pp * cp != count)
        par.fail("dp", "dp x tp x pp x cp does not equal hardware.count (" + std::to_string(count) + ")");
    if (chip->kind == ChipKind::gpu) {
        const std::string node_text = hw.opt_string("node").value_or("");
        std::string node = chip->id.find("h100") != std::string::npos ? "dgx-h100" : "dgx-a100";
        if (chip->id.find("h800") != std::string::npos) node = "h800-cluster";
        if (has(node_text, "a3")) node = "a3-megagpu-8g";
        const NodeSpec* n = cat.find_node(node);
        if (count % n->gpus_per_node != 0) hw.fail("count", "expected whole nodes of " + std::to_string(n->gpus_per_node));
        r.system = cat.gpu_system(node, count / n->gpus_per_node, o.file(), hw.at_path("node"));
        r.assumptions.push_back("node " + node + " (" + node_text + ")");
    } else {
        const auto& rules = *chip->tpu;
        if (slices == 1 && count > rules.max_slice_chips) {
            slices = (count + rules.max_slice_chips - 1) / rules.max_slice_chips;
            r.assumptions.push_back(std::to_string(slices) + " slices over DCN (more chips than one slice holds)");
        }
        const int per_slice = count / slices;
        const std::string type = rules.type_prefix + "-" +
                                 std::to_string(rules.type_counts_cores ? per_slice * rules.cores_per_chip : per_slice);
        r.system = cat.tpu_system(type, slices, o.file(), hw.at_path("count"));
    }

    // --- plan ---------------------------------------------------------------------------------------------------
    ParallelPlan& p = r.plan;
    p.dp = dp_total, p.tp = tp, p.pp = pp, p.cp = cp;
    p.vpp = static_cast<int>(par.has("vpp") ? par.positive_int("vpp") : 1);
    p.schedule = p.vpp > 1 ? Schedule::interleaved : Schedule::one_f_one_b;
    p.zero = static_cast<int>(par.has("zero") ? par.integer("zero") : 0);
    p.ep = static_cast<int>(par.has("ep") ? par.positive_int("ep") : 1);
    if (par.has("etp")) p.etp = static_cast<int>(par.positive_int("etp"));
    // DualPipe (DeepSeek-V3) overlaps the expert all-to-alls of one micro-batch with another's compute.
    p.ep_overlap = has(framework, "dualpipe") || has(framework, "a2a overlap");
    // DeepEP (and DeepSeek's own kernels before it) send a token to each destination node once over RDMA and forward
    // it over NVLink.
    p.ep_node_dedup = has(framework, "deepep") || has(framework, "dualpipe");
    if (m.moe.enabled())
        r.assumptions.push_back(std::string("expert all-to-all ") + (p.ep_overlap ? "overlapped" : "blocking") +
                                (p.ep_node_dedup ? ", one copy per destination node" : ""));
    if (par.has("sp")) p.sp = par.boolean("sp") && tp > 1;
    else {
        p.sp = tp > 1 && xla;  // XLA shards the activations over the tensor axis between layers
        r.assumptions.push_back(std::string("sequence parallel ") + (p.sp ? "on (XLA sharded activations)" : "off"));
    }
    const std::string ddp = par.opt_string("ddp_impl").value_or("");
    if (ddp == "local") {
        // Megatron's "local" DDP: fp32 main gradients, one all-reduce after the pipeline flush.
        p.dp_overlap = false, p.grad_reduce_bytes = 4;
    } else if (ddp == "torch") {
        p.dp_overlap = true, p.grad_reduce_bytes = 2;
    }
    // NeMo 24.07: userbuffers overlap of all TP communication; XLA: its latency-hiding scheduler runs the backward
    // input-gradient collectives under the independent weight-gradient GEMMs; Megatron-LM 2021: blocking.
    p.tp_comm_overlap = nemo || xla ? TpOverlap::full : TpOverlap::none;
    r.assumptions.push_back(std::string("TP communication overlap: ") + to_string(p.tp_comm_overlap));
    p.param_gather_overlap = true;
    const std::string precision = lower(set.string("precision"));
    p.precision = has(precision, "fp8") ? Precision::fp8 : has(precision, "fp16") && !has(precision, "bf16 act")
                                                               ? Precision::fp16
                                                               : Precision::bf16;
    if (has(precision, "fp32 weights")) {
        // MaxText: fp32 parameters only, cast to bf16 on use (XLA moves the cast before the FSDP all-gather);
        // gradients are fp32.
        p.compute_weight_copy = false, p.param_gather_bytes = 2, p.grad_reduce_bytes = 4;
        r.assumptions.push_back("fp32 weights: no 16-bit copy, bf16 FSDP gathers, fp32 gradient reduction");
    }
    const std::string rc = lower(set.opt_string("recompute").value_or(""));
    if (rc.empty()) {
        p.recompute = Recompute::none;
        r.assumptions.push_back("no activation recomputation (NeMo performance-config default)");
    } else if (has(rc, "selective")) p.recompute = Recompute::selective;
    else if (has(rc, "minimal")) p.recompute = Recompute::minimal;
    else if (has(rc, "full") || has(rc, "remat")) p.recompute = Recompute::full;
    else p.recompute = Recompute::none;
    p.attention = (nemo || has(framework, "flash")) ? AttentionKernel::flash : AttentionKernel::standard;
    r.assumptions.push_back(std::string("attention kernel ") + to_string(p.attention));

    p.global_batch = bat.positive_int("global_batch_seqs");
    const long long ga = bat.has("grad_accum") ? bat.positive_int("grad_accum") : 1;
    if (p.global_batch % (static_cast<long long>(p.dp) * ga) != 0)
        bat.fail("global_batch_seqs", "not divisible by dp x grad_accum");
    p.micro_batch = p.global_batch / (p.dp * ga);
    // With pipelining a local batch is cut into micro-batches: the published micro-batch size, when it divides.
    if (p.pp > 1 && bat.has("micro_batch")) {
        const long long mb = bat.positive_int("micro_batch");
        if (p.global_batch % (mb * p.dp) == 0) p.micro_batch = mb;
    }
    r.published_step_time_s = o.positive("step_time_s");
    return r;
}

}  // namespace

PublishedPrediction simulate_published(const PublishedRun& run, const StepOptions& base) {
    StepOptions opt = base;
    opt.skip_engine_if_infeasible = false;
    PublishedPrediction out;
    ParallelPlan plan = run.plan;
    out.step = simulate_step(run.model, run.system, plan, opt);
    while (!out.step.memory.fits && plan.recompute != Recompute::full) {
        const Recompute from = plan.recompute;
        plan.recompute = from == Recompute::none ? Recompute::selective
                         : from == Recompute::selective ? Recompute::minimal
                                                        : Recompute::full;
        StepResult next = simulate_step(run.model, run.system, plan, opt);
        out.escalation = std::string("recompute ") + to_string(run.plan.recompute) + " does not fit our memory model; " +
                         "simulated with " + to_string(plan.recompute);
        out.step = std::move(next);
    }
    out.plan = plan;
    return out;
}

std::vector<PublishedRun> load_published_runs(const std::string& file, const Catalog& cat) {
    Json j = load_json_file(file);
    if (!j.is_array()) throw InputError(file, "$", "expected a JSON array of published runs");
    std::vector<PublishedRun> out;
    for (size_t i = 0; i < j.size(); ++i) out.push_back(read_run(JsonObject(j[i], file, "$[" + std::to_string(i) + "]"), cat));
    return out;
}

}  // namespace podsim
