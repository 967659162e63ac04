#include "models/published_run.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "hardware/limits.hpp"

namespace podsim {

namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}
bool has(const std::string& text, const char* word) { return lower(text).find(word) != std::string::npos; }

// Recomputation as a record states it at settings.recompute: a mode name ("full", "selective", "none") or a JAX/MaxText
// remat policy ("remat_policy=save_dot_except_mlp"; custom with settings.remat_tensors). An unknown policy name is an
// error; text naming no mode leaves recomputation free.
std::optional<RematPolicy> recompute_from_text(const JsonObject& set) {
    const std::string t = lower(set.opt_string("recompute").value_or(""));
    if (const auto at = t.find("remat_policy"); at != std::string::npos) {
        size_t i = at + std::string("remat_policy").size();
        while (i < t.size() && (t[i] == '=' || t[i] == ':' || t[i] == ' ')) ++i;
        size_t e = i;
        while (e < t.size() && (std::isalnum(static_cast<unsigned char>(t[e])) || t[e] == '_')) ++e;
        return remat_policy_at(set, "recompute", t.substr(i, e - i));
    }
    if (set.has("remat_tensors")) set.fail("remat_tensors", "no remat_tensors unless recompute is remat_policy=custom");
    auto mode = [](Recompute r) { return std::optional<RematPolicy>(RematPolicy{r, {}}); };
    if (t.rfind("none", 0) == 0 || t.rfind("no ", 0) == 0 || t == "off") return mode(Recompute::none);
    if (has(t, "selective")) return mode(Recompute::selective);
    if (has(t, "minimal")) return mode(Recompute::minimal);
    if (has(t, "full") || has(t, "remat") || has(t, "checkpointing") || has(t, "uniform")) return mode(Recompute::full);
    return std::nullopt;
}

// A ZeRO stage as a source states it in words ("ZeRO-1", "ZeRO stage 3", "distributed optimizer", "FSDP").
std::optional<int> zero_from_text(const std::string& text) {
    const std::string t = lower(text);
    for (int z = 0; z <= 3; ++z) {
        const std::string d = std::to_string(z);
        if (has(t, ("zero-" + d).c_str()) || has(t, ("zero stage " + d).c_str()) ||
            has(t, ("zero " + d).c_str()) || has(t, ("stage " + d).c_str()))
            return z;
    }
    if (has(t, "fsdp") || has(t, "fully sharded")) return 3;
    if (has(t, "distributed optimizer")) return 1;
    return std::nullopt;
}

PublishedRun read_run(const JsonObject& o, const Catalog& cat, const std::vector<SoftwareStack>& stacks) {
    PublishedRun r;
    r.id = o.string("id");
    auto mo = o.object("model");
    auto hw = o.object("hardware");
    static const Json no_object = Json::object();
    const JsonObject empty(no_object, o.file(), o.at_path("parallel"));
    auto par = o.has("parallel") ? o.object("parallel") : empty;
    auto bat = o.object("batch");
    auto set = o.has("settings") ? o.object("settings") : JsonObject(no_object, o.file(), o.at_path("settings"));
    const std::string arch = mo.opt_string("arch").value_or("");
    const std::string framework = set.opt_string("framework").value_or("");

    // --- software stack: the catalog's entry the framework names, else every behaviour the best feasible --------
    if (const SoftwareStack* st = find_stack(stacks, framework)) {
        r.stack = *st;
        r.assumptions.push_back("software stack " + st->id);
    } else {
        r.stack = unknown_stack(framework);
        r.assumptions.push_back("framework \"" + framework + "\" not in the software catalog: behaviours chosen as the "
                                                             "best feasible (overlaps on, flash attention)");
    }
    const SoftwareStack& stack = r.stack;

    ModelSpec& m = r.model;
    m.name = mo.opt_string("name").value_or(r.id);
    read_shape(mo, m);
    if (auto e = mo.opt_object("moe")) read_moe(*e, m);
    if (auto a = mo.opt_object("mla")) read_mla(*a, mo, m);
    r.published_params_b = mo.number_in("params_b", 1e-9, limits::max_params / 1e9);
    // The architecture as the record's `arch` text states it (the published-run format documents that field as the
    // activation, block, embedding and position description).
    const bool llama = has(arch, "llama");
    if (has(arch, "swiglu") || llama) m.activation = Activation::swiglu;
    else if (has(arch, "squared-relu") || has(arch, "squared relu")) m.activation = Activation::squared_relu;
    else if (has(arch, "relu")) m.activation = Activation::relu;
    else m.activation = Activation::gelu;
    m.parallel_block = has(arch, "parallel");
    // GPT-2/3 and Megatron/NeMo GPT share the input embedding with the output layer; Llama and Nemotron do not.
    // ("untied output layer" says the opposite of "tied embeddings".)
    m.tied_embeddings = (has(arch, "tied") && !has(arch, "untied")) || has(arch, "shared in/out") || (has(arch, "gpt") && !llama);
    // Biases: as stated; GPT-2/3 have them (Radford et al. 2019); else the stack's default layers.
    if (has(arch, "no bias")) m.bias = false;
    else if (has(arch, "gpt") && !llama) m.bias = true;
    else m.bias = stack.linear_bias && !llama;
    m.norm = llama || has(arch, "rmsnorm") ? Norm::rmsnorm : Norm::layernorm;
    m.position = has(arch, "learned pos") || has(arch, "gpt-3") || has(arch, "gpt-2") ? Position::learned
                                                                                        : Position::rope;
    m.dropout = stack.dropout;
    r.assumptions.push_back(std::string("dropout ") + (m.dropout ? "0.1" : "off") + " (" + stack.id + " default)");

    // --- system -------------------------------------------------------------------------------------------------
    const std::string chip_name = hw.string("chip");
    const ChipSpec* chip = cat.find_chip(chip_name);
    if (!chip) hw.fail("chip", "unknown chip \"" + chip_name + "\"" + cat.chip_hint(chip_name));
    const long long D = limits::max_parallel_degree;
    const int count = hw.count("count", 1, limits::max_chips);
    PartialPlan pp;
    ParallelPlan& p = pp.plan;
    auto degree = [&](const char* key, PlanField f, int& into) {
        if (par.has(key)) into = par.count(key, 1, D);
        else pp.free.add(f);
    };
    degree("tp", PlanField::tp, p.tp);
    degree("pp", PlanField::pp, p.pp);
    degree("cp", PlanField::cp, p.cp);
    degree("dp", PlanField::dp, p.dp);
    if (par.has("cp_algorithm")) {  // stated: the stack's does not replace it
        p.cp_algorithm = par.one_of("cp_algorithm", {"ring", "all_gather"}) == "ring" ? ParallelPlan::CpAlgorithm::ring
                                                                                    : ParallelPlan::CpAlgorithm::all_gather;
        pp.cp_algorithm_stated = true;
    }
    const int fsdp = par.count("fsdp_degree", 1, D, 1);
    int slices = par.count("dcn_dp", 1, limits::max_slices, 0);  // data-parallel slices over DCN, when stated
    if (!pp.free.has(PlanField::dp)) {
        ParallelPlan split = p;
        check_chip_product(split, par);
        if (static_cast<long long>(split.chips()) * fsdp > limits::max_chips)
            par.fail("fsdp_degree", "dp x fsdp_degree x tp x pp x cp exceeds " + std::to_string(limits::max_chips));
    }
    const bool split_known = !pp.free.has(PlanField::dp) && !pp.free.has(PlanField::tp) &&
                             !pp.free.has(PlanField::pp) && !pp.free.has(PlanField::cp);
    if (slices > 0) {
        // dcn_dp slices x (dp x fsdp_degree inside each slice): the data-parallel degree is their product.
        if (!pp.free.has(PlanField::dp)) p.dp = static_cast<int>(std::min<long long>(D, 1LL * p.dp * fsdp * slices));
        else if (fsdp > 1) pp.free.remove(PlanField::dp), p.dp = fsdp * slices;
    } else if (split_known) {
        slices = 1;
        if (1LL * p.dp * p.tp * p.pp * p.cp != count && 1LL * p.dp * fsdp * p.tp * p.pp * p.cp == count) {
            slices = p.dp;  // the published-run format's MaxText rows: dp counts slices (DCN), fsdp_degree is in-slice
            p.dp *= fsdp;
        }
    }
    if (split_known && 1LL * p.dp * p.tp * p.pp * p.cp != count)
        par.fail("dp", "dp x tp x pp x cp does not equal hardware.count (" + std::to_string(count) + ")");
    if (chip->kind == ChipKind::cpu || (chip->kind == ChipKind::tpu && !chip->tpu))
        hw.fail("chip", "\"" + chip_name + "\" is not a TPU or GPU with a system in the catalog (published runs are "
                        "simulated on TPU slices or GPU nodes)");
    if (chip->kind == ChipKind::gpu) {
        const std::string node_text = hw.opt_string("node").value_or("");
        // The machine: the catalog's node when the record names one exactly (id or alias); else the on-premise node
        // that carries the chip (vendors publish on their reference systems), else the first cloud VM that does.
        // Nothing is read from the words of a description.
        const NodeSpec* n = cat.find_node(node_text);
        if (n && n->chip != chip->id) n = nullptr;
        for (int pass = 0; pass < 2 && !n; ++pass)
            for (const auto& cand : cat.nodes())
                if (!n && cand.chip == chip->id && (pass == 1 || cand.provider == "onprem")) n = &cand;
        if (!n) hw.fail("chip", "no GPU node in the catalog carries \"" + chip_name + "\"");
        const std::string node = n->id;
        if (count % n->gpus_per_node != 0) hw.fail("count", "expected whole nodes of " + std::to_string(n->gpus_per_node));
        r.system = cat.gpu_system(node, count / n->gpus_per_node, o.file(), hw.at_path("node"));
        r.assumptions.push_back("node " + node + " (" + node_text + ")");
    } else {
        const auto& rules = *chip->tpu;
        if (slices <= 0) slices = 1;
        if (count % slices != 0) par.fail("dcn_dp", "does not divide hardware.count (" + std::to_string(count) + ")");
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
    if (par.has("vpp")) {
        p.vpp = par.count("vpp", 1, D);
    } else if (!stack.interleaved_pipeline || (!pp.free.has(PlanField::pp) && p.pp == 1)) {
        p.vpp = 1;  // the stack has no interleaved schedule (or there is no pipeline): nothing to choose
    } else {
        pp.free.add(PlanField::vpp);
    }
    p.schedule = p.vpp > 1 ? Schedule::interleaved : Schedule::one_f_one_b;
    if (par.has("zero")) p.zero = par.count("zero", 0, 3);
    else if (auto z = zero_from_text(par.opt_string("zero_stage_text").value_or(""))) {
        p.zero = *z;
        r.assumptions.push_back("ZeRO stage " + std::to_string(*z) + " (from zero_stage_text)");
    } else pp.free.add(PlanField::zero);
    degree("ep", PlanField::ep, p.ep);
    if (pp.free.has(PlanField::ep) && !m.moe.enabled()) pp.free.remove(PlanField::ep), p.ep = 1;
    p.etp = par.count("etp", 1, D, 0);
    p.ep_overlap = par.opt_bool("ep_overlap").value_or(stack.ep_overlap);
    p.ep_node_dedup = par.opt_bool("ep_node_dedup").value_or(stack.ep_node_dedup);
    if (m.moe.enabled())
        r.assumptions.push_back(std::string("expert all-to-all ") + (p.ep_overlap ? "overlapped" : "blocking") +
                                (p.ep_node_dedup ? ", one copy per destination node" : ""));
    if (par.has("sp")) {
        p.sp = par.boolean("sp") && (pp.free.has(PlanField::tp) || p.tp > 1);
    } else if (stack.sequence_parallel == SpPolicy::always) {
        p.sp = true;  // XLA shards the activations over the tensor axis between layers
        r.assumptions.push_back("sequence parallel on (" + stack.id + " shards activations over the tensor axis)");
    } else if (stack.sequence_parallel == SpPolicy::never) {
        p.sp = false;
    } else {
        pp.free.add(PlanField::sp);
    }
    if (!pp.free.has(PlanField::tp) && p.tp == 1) p.sp = false, pp.free.remove(PlanField::sp);

    // Behaviours: the stack's (its sources in hardware/catalog/software/).
    pp.free.add(PlanField::attention), pp.free.add(PlanField::tp_comm_overlap);
    pp.free.add(PlanField::dp_overlap), pp.free.add(PlanField::param_gather_overlap);
    apply_stack_behaviours(stack, pp);
    if (set.has("compile")) p.eager_elementwise = !set.boolean("compile");  // torch.compile, where the source says
    if (set.has("grouped_gemm_row_tile")) p.gmm_row_tiles = gmm_row_tiles_at(set, "grouped_gemm_row_tile");
    if (m.moe.enabled() && m.moe.capacity_factor <= 0) {
        const GroupedGemmTiles& t = p.gmm_row_tiles;
        r.assumptions.push_back(
            t == GroupedGemmTiles{}
                ? "experts as one GEMM each (" + stack.id + ")"
                : fmt::format("experts as one grouped matmul over shared tiles of [{}, {}, {}] / [{}, {}, {}] rows "
                              "(up / down; forward, input gradient, weight gradient; {})",
                              t.up[0], t.up[1], t.up[2], t.down[0], t.down[1], t.down[2],
                              set.has("grouped_gemm_row_tile") ? "stated" : stack.id + " default"));
    }
    if (set.has("tp_comm_overlap")) {
        // As the source states it (TorchTitan's async TP, NeMo's tp_comm_overlap switch); else the stack's default.
        p.tp_comm_overlap = tp_overlap_at(set, "tp_comm_overlap");
    }
    const std::string ddp = par.opt_string("ddp_impl").value_or("");
    if (ddp == "local") {
        // Megatron's "local" DDP: fp32 main gradients, one all-reduce after the pipeline flush.
        p.dp_overlap = false, p.grad_reduce_bytes = 4;
    } else if (ddp == "torch") {
        p.dp_overlap = true, p.grad_reduce_bytes = 2;
    }
    r.assumptions.push_back(std::string("TP communication overlap: ") + to_string(p.tp_comm_overlap));
    r.assumptions.push_back(std::string("attention kernel ") + to_string(p.attention));
    if (p.eager_elementwise) r.assumptions.push_back("elementwise ops eager (no torch.compile)");
    if (p.selective == SelectiveRecompute::alternate_matmuls)
        r.assumptions.push_back("selective recomputation as TorchTitan's per-op policy (every other weight GEMM kept)");

    // Precision as the record's text states it; absent: the completion picks.
    if (set.has("precision")) {
        const std::string precision = lower(set.string("precision"));
        // The format the text names (torchao calls fp8 "Float8"); a text naming none is an error, not bf16.
        const bool fp4 = has(precision, "fp4"), int8 = has(precision, "int8") || has(precision, "aqt");
        const bool fp8 = has(precision, "fp8") || has(precision, "float8");
        const bool fp16 = (has(precision, "fp16") || has(precision, "float16")) && !has(precision, "bf16 act") &&
                          !has(precision, "bfloat16");
        const bool bf16 = has(precision, "bf16") || has(precision, "bfloat16");
        if (!fp4 && !int8 && !fp8 && !fp16 && !bf16)
            set.fail("precision", "expected a precision that names bf16 (bfloat16), fp16 (float16), fp8 (float8), "
                                  "int8 (AQT) or fp4 (NVFP4); got \"" + set.string("precision") + "\"");
        p.precision = fp4 ? Precision::fp4  // "fp4", "nvfp4"; before fp8: "nvfp4, fp8 ..."
                      : int8 ? Precision::int8
                      : fp8 ? Precision::fp8
                      : fp16 ? Precision::fp16
                             : Precision::bf16;
        // fp8 scaling as stated ("fine-grained" is DeepSeek-V3's tile / block scaling); otherwise TE's default.
        if (has(precision, "fine-grained") || has(precision, "blockwise") || has(precision, "mxfp8"))
            p.fp8_recipe = Fp8Recipe::blockwise;
        else if (has(precision, "current scaling") || has(precision, "tensorwise")) p.fp8_recipe = Fp8Recipe::tensorwise;
        if (has(precision, "fp32 weights")) {
            // One fp32 copy cast to bf16 on use (XLA moves the cast before the FSDP all-gather); fp32 gradients.
            p.compute_weight_copy = false, p.param_gather_bytes = 2, p.grad_reduce_bytes = 4;
            r.assumptions.push_back("fp32 weights: no 16-bit copy, bf16 FSDP gathers, fp32 gradient reduction");
        }
        if (has(precision, "weight_dtype bfloat16")) {
            // MaxText weight_dtype=bfloat16: the only copy of the weights is bf16, gradients too, and AdamW's moments
            // follow it (mu_dtype inherits weight_dtype; optax keeps nu in the parameters' dtype).
            p.compute_weight_copy = false, p.master_weight_bytes = 2, p.param_gather_bytes = 2, p.grad_reduce_bytes = 2;
            p.optimizer_state_bytes = 4;
            r.assumptions.push_back("bf16 weights: one bf16 copy, bf16 gradients and AdamW moments");
        }
    } else {
        pp.free.add(PlanField::precision);
    }
    if (auto rc = recompute_from_text(set)) {
        p.recompute = rc->recompute, p.remat = rc->names;
        if (p.recompute == Recompute::names)
            r.assumptions.push_back("named-tensor recomputation (JAX): keeps " + to_string(p.remat) +
                                    (p.remat.offload ? "; host copies hidden under the compute, host memory checked "
                                                       "only where the catalog states it"
                                                     : ""));
    }
    else pp.free.add(PlanField::recompute);
    // Activation offload (Megatron-Core's cpu_offloading_num_layers) as published, else free: the completion takes
    // none unless only offload makes the plan fit (it allows none with recomputation or pipelining).
    if (set.has("offload_layers")) p.offload_layers = set.count("offload_layers", 0, limits::max_parallel_degree);
    else pp.free.add(PlanField::offload_layers);

    p.global_batch = bat.int_in("global_batch_seqs", 1, limits::max_global_batch_seqs);
    const long long ga = bat.int_in("grad_accum", 1, p.global_batch, 0);   // 0: not published
    const long long mb = bat.int_in("micro_batch", 1, p.global_batch, 0);
    const bool dp_known = !pp.free.has(PlanField::dp);
    if (dp_known && ga > 0 && p.global_batch % (static_cast<long long>(p.dp) * ga) != 0)
        bat.fail("global_batch_seqs", "not divisible by dp x grad_accum");
    if (dp_known && p.global_batch % p.dp != 0) bat.fail("global_batch_seqs", "not divisible by dp");
    const bool pipelined = !pp.free.has(PlanField::pp) && p.pp > 1;
    if (pipelined && mb > 0 && dp_known && p.global_batch % (mb * p.dp) == 0) {
        p.micro_batch = mb;  // a pipeline cuts the local batch into the published micro-batches
    } else if (!pp.free.has(PlanField::pp) && p.pp == 1 && dp_known && ga > 0) {
        p.micro_batch = p.global_batch / (p.dp * ga);  // without a pipeline: the local batch per accumulation step
    } else if (!pipelined && !pp.free.has(PlanField::pp) && mb > 0 && dp_known && p.global_batch % (mb * p.dp) == 0) {
        p.micro_batch = mb;
    } else {
        pp.free.add(PlanField::micro_batch);
    }
    r.published_step_time_s = o.number_in("step_time_s", 1e-6, 1e7);
    if (const std::string why = settle_offload(pp, r.system, stack); !why.empty()) set.fail("offload_layers", why);
    r.plan = pp.plan;
    r.free = pp.free;
    return r;
}

}  // namespace

PublishedPrediction simulate_published(const PublishedRun& run, const StepOptions& base) {
    StepOptions opt = base;
    opt.skip_engine_if_infeasible = false;
    PublishedPrediction out;
    ParallelPlan plan = run.plan;
    if (run.free.any_structural()) {
        // Settings the source did not publish: the best feasible plan consistent with what it did.
        CompletionOptions co;
        co.use_profiles = opt.use_profiles, co.budget = opt.budget, co.kernels = opt.kernels;
        const PlanCompletion c = complete_plan(run.model, run.system, PartialPlan{run.plan, run.free}, run.stack, co);
        plan = c.plan;
        out.chosen = c.chosen;
        if (!c.found) out.chosen.push_back("no feasible completion: " + c.reason);
    }
    // The memory model decides the escalation before any task graph is built: each candidate is priced (memory
    // included) without the engine, and only the plan finally kept is simulated, once.
    StepOptions price_only = opt;
    price_only.skip_engine_if_infeasible = true;
    out.step = simulate_step(run.model, run.system, plan, price_only);
    const std::string stated = recompute_label(plan);
    // (Megatron-Core has no offload with recomputation: an escalated plan offloads nothing.)
    while (!out.step.memory.fits && plan.recompute != Recompute::full) {
        plan.offload_layers = 0;
        const Recompute from = plan.recompute;
        // (TorchTitan's selective policy already keeps less than minimal, and the stack has no minimal mode.)
        const bool alternate = plan.selective == SelectiveRecompute::alternate_matmuls;
        plan.recompute = from == Recompute::none                     ? Recompute::selective
                         : from == Recompute::selective && !alternate ? Recompute::minimal
                                                                      : Recompute::full;
        out.escalation = "recompute " + stated + " does not fit our memory model; " +
                         "simulated with " + to_string(plan.recompute);
        out.step = simulate_step(run.model, run.system, plan, price_only);
    }
    // An infeasible plan skipped the engine above; it is simulated as it is (its reasons then say why).
    if (!out.step.feasible) out.step = simulate_step(run.model, run.system, plan, opt);
    out.plan = plan;
    return out;
}

std::vector<PublishedRun> load_published_runs(const std::string& file, const Catalog& cat) {
    Json j = load_json_file(file);
    if (!j.is_array()) throw InputError(file, "$", "expected a JSON array of published runs");
    if (j.empty()) throw InputError(file, "$", "expected at least one published run, got an empty array");
    const auto stacks = load_software_stacks(default_catalog_dir());
    std::vector<PublishedRun> out;
    for (size_t i = 0; i < j.size(); ++i) {
        const std::string path = "$[" + std::to_string(i) + "]";
        try {
            out.push_back(read_run(JsonObject(j[i], file, path), cat, stacks));
        } catch (const InputError& e) {
            // One unreadable record does not hide the others: it is kept with its reason.
            PublishedRun bad;
            bad.id = j[i].is_object() && j[i].contains("id") && j[i]["id"].is_string() ? j[i]["id"].get<std::string>()
                                                                                      : path;
            bad.error = e.what();
            out.push_back(std::move(bad));
        }
    }
    return out;
}

}  // namespace podsim
