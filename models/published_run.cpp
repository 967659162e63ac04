#include "models/published_run.hpp"

#include <algorithm>
#include <cmath>

#include "hardware/limits.hpp"

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
    read_shape(mo, m);
    if (auto e = mo.opt_object("moe")) read_moe(*e, m);
    if (auto a = mo.opt_object("mla")) read_mla(*a, mo, m);
    r.published_params_b = mo.number_in("params_b", 1e-9, limits::max_params / 1e9);
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
    const long long D = limits::max_parallel_degree;
    const int count = hw.count("count", 1, limits::max_chips);
    const int dp = par.count("dp", 1, D), tp = par.count("tp", 1, D), pp = par.count("pp", 1, D);
    const int cp = par.count("cp", 1, D, 1);
    const int fsdp = par.count("fsdp_degree", 1, D, 1);
    {
        ParallelPlan split;
        split.dp = dp, split.tp = tp, split.pp = pp, split.cp = cp;
        check_chip_product(split, par);
        if (static_cast<long long>(split.chips()) * fsdp > limits::max_chips)
            par.fail("fsdp_degree", "dp x fsdp_degree x tp x pp x cp exceeds " + std::to_string(limits::max_chips));
    }
    int dp_total = dp;
    int slices = 1;
    if (dp * tp * pp * cp != count && dp * fsdp * tp * pp * cp == count) {
        dp_total = dp * fsdp;  // MaxText: dp counts slices (DCN), fsdp_degree shards inside each slice (ICI)
        slices = dp;
    }
    if (dp_total * tp * pp * cp != count)
        par.fail("dp", "dp x tp x pp x cp does not equal hardware.count (" + std::to_string(count) + ")");
    if (chip->kind == ChipKind::cpu || (chip->kind == ChipKind::tpu && !chip->tpu))
        hw.fail("chip", "\"" + chip_name + "\" is not a TPU or GPU with a system in the catalog (published runs are "
                        "simulated on TPU slices or GPU nodes)");
    if (chip->kind == ChipKind::gpu) {
        const std::string node_text = hw.opt_string("node").value_or("");
        std::string node = chip->id.find("h100") != std::string::npos ? "dgx-h100" : "dgx-a100";
        if (chip->id.find("h800") != std::string::npos) node = "h800-cluster";
        if (has(node_text, "a3")) node = "a3-megagpu-8g";
        const NodeSpec* n = cat.find_node(node);
        if (!n || n->chip != chip->id) {  // a GPU none of the named nodes carries: the catalog's node that has it
            n = nullptr;
            for (const auto& cand : cat.nodes())
                if (cand.chip == chip->id && !n) n = &cand;
            if (!n) hw.fail("chip", "no GPU node in the catalog carries \"" + chip_name + "\"");
            node = n->id;
        }
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
    p.vpp = par.count("vpp", 1, D, 1);
    p.schedule = p.vpp > 1 ? Schedule::interleaved : Schedule::one_f_one_b;
    p.zero = par.count("zero", 0, 3, 0);
    p.ep = par.count("ep", 1, D, 1);
    p.etp = par.count("etp", 1, D, 0);
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

    p.global_batch = bat.int_in("global_batch_seqs", 1, limits::max_global_batch_seqs);
    const long long ga = bat.int_in("grad_accum", 1, p.global_batch, 1);
    if (p.global_batch % (static_cast<long long>(p.dp) * ga) != 0)
        bat.fail("global_batch_seqs", "not divisible by dp x grad_accum");
    p.micro_batch = p.global_batch / (p.dp * ga);
    // With pipelining a local batch is cut into micro-batches: the published micro-batch size, when it divides.
    if (p.pp > 1 && bat.has("micro_batch")) {
        const long long mb = bat.int_in("micro_batch", 1, p.global_batch);
        if (p.global_batch % (mb * p.dp) == 0) p.micro_batch = mb;
    }
    r.published_step_time_s = o.number_in("step_time_s", 1e-6, 1e7);
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
    if (j.empty()) throw InputError(file, "$", "expected at least one published run, got an empty array");
    std::vector<PublishedRun> out;
    for (size_t i = 0; i < j.size(); ++i) out.push_back(read_run(JsonObject(j[i], file, "$[" + std::to_string(i) + "]"), cat));
    return out;
}

}  // namespace podsim
