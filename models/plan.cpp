#include "models/plan.hpp"

#include "hardware/limits.hpp"

namespace podsim {

const char* to_string(Schedule s) {
    switch (s) {
        case Schedule::gpipe: return "gpipe";
        case Schedule::one_f_one_b: return "1f1b";
        case Schedule::interleaved: return "interleaved-1f1b";
    }
    return "?";
}
const std::vector<ChoiceDoc>& schedule_docs() {
    static const std::vector<ChoiceDoc> docs = [] {
        const ParamDoc pp{"pp", "pipeline stages"};
        const ParamDoc m{"micro-batches", "global_batch / (micro_batch x dp) per step"};
        return std::vector<ChoiceDoc>{
            {to_string(Schedule::gpipe),
             "all forwards, then all backwards (Huang et al. 2019): bubble (pp-1)/(m+pp-1), every micro-batch's "
             "activations held at once",
             {pp, m}},
            {to_string(Schedule::one_f_one_b),
             "one forward, one backward in steady state (PipeDream-Flush, Narayanan et al. 2021): GPipe's bubble, "
             "at most pp micro-batches' activations in flight",
             {pp, m}},
            {to_string(Schedule::interleaved),
             "1F1B over vpp model chunks per stage (Megatron-LM, Narayanan et al. 2021): the bubble divided by vpp, "
             "at the cost of pp x vpp - 1 hand-offs each way",
             {pp, {"micro-batches", "as above, a multiple of pp (Megatron-LM's rule)"},
              {"vpp", "model chunks per stage (> 1; divides the layers per stage)"}}},
        };
    }();
    return docs;
}

const char* to_string(Recompute r) {
    switch (r) {
        case Recompute::none: return "none";
        case Recompute::selective: return "selective";
        case Recompute::minimal: return "minimal";
        case Recompute::full: return "full";
        case Recompute::names: return "names";
    }
    return "?";
}
const char* to_string(Precision p) {
    switch (p) {
        case Precision::fp16: return "fp16";
        case Precision::bf16: return "bf16";
        case Precision::fp8: return "fp8";
        case Precision::int8: return "int8";
        case Precision::fp4: return "fp4";
    }
    return "?";
}
const char* to_string(Fp8Recipe r) {
    switch (r) {
        case Fp8Recipe::delayed: return "delayed";
        case Fp8Recipe::tensorwise: return "tensorwise";
        case Fp8Recipe::blockwise: return "blockwise";
    }
    return "?";
}
bool in_fp8_efficiency_class(Precision p) { return p == Precision::fp8 || p == Precision::fp4; }
const char* efficiency_class(Precision p) { return in_fp8_efficiency_class(p) ? "fp8" : "16bit"; }

const std::vector<ChoiceDoc>& precision_docs() {
    static const std::vector<ChoiceDoc> docs = [] {
        const ParamDoc frac16{"efficiency.matmul_peak_fraction", "GEMM efficiency, or the chip's 16-bit profile"};
        const ParamDoc frac8{"efficiency.fp8_matmul_peak_fraction", "GEMM efficiency, or the chip's fp8 profile"};
        return std::vector<ChoiceDoc>{
            {to_string(Precision::fp16), "16-bit GEMMs (with loss scaling)", {{"peak_bf16_flops_per_s", "FLOP/s"}, frac16}},
            {to_string(Precision::bf16), "16-bit GEMMs", {{"peak_bf16_flops_per_s", "FLOP/s"}, frac16}},
            {to_string(Precision::fp8),
             "forward, dgrad and wgrad GEMMs in fp8 (Transformer Engine), with the recipe's casts and amax reductions",
             {{"peak_fp8_flops_per_s", "FLOP/s; a chip without it rejects the plan"}, frac8,
              {"training.fp8_recipe", "delayed (default), tensorwise or blockwise"}}},
            {to_string(Precision::int8),
             "AQT (MaxText quantization=int8): forward and dgrad GEMMs in int8, wgrad in bf16, each int8 GEMM's "
             "operands quantized in its own pass",
             {{"peak_int8_ops_per_s", "OP/s; a chip without it rejects the plan"},
              {"efficiency.matmul_peak_fraction", "the 16-bit GEMM efficiency (no published int8 fit)"}}},
            {to_string(Precision::fp4),
             "NVFP4 (arXiv:2509.25149): forward, dgrad and wgrad GEMMs in fp4 with 16-element block scales, the "
             "wgrad's operands through a random Hadamard transform",
             {{"peak_fp4_flops_per_s", "FLOP/s (dense); a chip without it rejects the plan"},
              {"efficiency.fp8_matmul_peak_fraction", "the fp8 GEMM efficiency (no published fp4 fit)"}}},
        };
    }();
    return docs;
}

const std::vector<ChoiceDoc>& fp8_recipe_docs() {
    static const std::vector<ChoiceDoc> docs = [] {
        const ParamDoc casts{"casts", "each GEMM input cast to fp8 with its transposed copy (memory-bound ops)"};
        return std::vector<ChoiceDoc>{
            {to_string(Fp8Recipe::delayed),
             "Transformer Engine DelayedScaling: scales from an amax history; one cast pass; the amaxes all-reduced "
             "over TP x DP x CP when each model chunk's forward and backward end",
             {casts, {"amax_history_len", "1024 (TE default): the history update's bytes"}}},
            {to_string(Fp8Recipe::tensorwise),
             "TE Float8CurrentScaling: each tensor's amax read first, then the cast (two passes); sequence-parallel "
             "tensors' amaxes all-reduced over TP",
             {casts}},
            {to_string(Fp8Recipe::blockwise),
             "MXFP8 (1x32 blocks, E8M0 scales) or DeepSeek-style 1x128 / 128x128 blocks: scales found inside the "
             "cast, 1/32 byte of scale per element, no amax reduction",
             {casts}},
        };
    }();
    return docs;
}
const char* to_string(AttentionKernel a) {
    return a == AttentionKernel::flash ? "flash" : a == AttentionKernel::flash2 ? "flash2" : "standard";
}
AttentionKernel attention_kernel_at(const JsonObject& o, const char* key) {
    const std::string a = o.one_of(key, {"standard", "flash", "flash2"});
    return a == "flash" ? AttentionKernel::flash : a == "flash2" ? AttentionKernel::flash2 : AttentionKernel::standard;
}
TpOverlap tp_overlap_at(const JsonObject& o, const char* key) {
    const std::string t = o.one_of(key, {"none", "backward", "full"});
    return t == "none" ? TpOverlap::none : t == "backward" ? TpOverlap::backward : TpOverlap::full;
}
const char* to_string(SelectiveRecompute s) {
    return s == SelectiveRecompute::alternate_matmuls ? "alternate_matmuls" : "attention_core";
}
const char* to_string(PipelineP2p p) {
    return p == PipelineP2p::scatter_gather   ? "scatter_gather"
           : p == PipelineP2p::sequence_shard ? "sequence_shard"
                                              : "full_blocking";
}

const char* to_string(TpOverlap t) {
    return t == TpOverlap::none ? "none" : t == TpOverlap::backward ? "backward" : "full";
}

void check_chip_product(const ParallelPlan& p, const JsonObject& par) {
    long long chips = 1;
    for (const int d : {p.dp, p.tp, p.pp, p.cp}) {
        chips *= d;  // each factor <= max_chips, so the running product stays below 2^44 before the check
        if (chips > limits::max_chips)
            par.fail("dp", "dp x tp x pp x cp exceeds " + std::to_string(limits::max_chips) +
                               " accelerators, the most podsim simulates");
    }
}

const char* to_string(PlanField f) {
    switch (f) {
        case PlanField::dp: return "parallel.dp";
        case PlanField::tp: return "parallel.tp";
        case PlanField::pp: return "parallel.pp";
        case PlanField::vpp: return "parallel.vpp";
        case PlanField::cp: return "parallel.cp";
        case PlanField::ep: return "parallel.ep";
        case PlanField::sp: return "parallel.sp";
        case PlanField::zero: return "parallel.zero";
        case PlanField::micro_batch: return "batch.micro_batch";
        case PlanField::precision: return "training.precision";
        case PlanField::recompute: return "training.recompute";
        case PlanField::offload_layers: return "training.offload_layers";
        case PlanField::attention: return "training.attention";
        case PlanField::tp_comm_overlap: return "parallel.tp_comm_overlap";
        case PlanField::dp_overlap: return "parallel.dp_overlap";
        case PlanField::param_gather_overlap: return "parallel.param_gather_overlap";
    }
    return "?";
}

bool PlanFields::any_structural() const {
    PlanFields s = *this;
    for (PlanField f : {PlanField::attention, PlanField::tp_comm_overlap, PlanField::dp_overlap,
                        PlanField::param_gather_overlap})
        s.remove(f);
    return !s.empty();
}

GroupedGemmTiles gmm_row_tiles_at(const JsonObject& o, const char* key) {
    constexpr long long kMaxRows = 65536;
    if (!o.has(key)) o.fail(key, "missing: expected a row count or {\"up\": [3 passes], \"down\": [3 passes]}");
    if (!o.raw().at(key).is_object()) return GroupedGemmTiles::all(int(o.int_in(key, 0, kMaxRows)));
    const JsonObject t = o.object(key);
    t.only_keys({"up", "down"});
    GroupedGemmTiles r;
    auto three = [&](const char* m, int* out) {
        const Json& a = t.array(m);
        if (a.size() != 3) t.fail(m, "expected 3 row tiles: [forward, input gradient, weight gradient]");
        for (size_t i = 0; i < 3; ++i) {
            if (!a[i].is_number_integer() || a[i].get<long long>() < 0 || a[i].get<long long>() > kMaxRows)
                t.fail(m, "expected an integer 0-" + std::to_string(kMaxRows) + " at [" + std::to_string(i) + "]");
            out[i] = a[i].get<int>();
        }
    };
    three("up", r.up);
    three("down", r.down);
    return r;
}

PartialPlan plan_from_json(const JsonObject& par, const JsonObject& batch, const JsonObject& tr) {
    par.only_keys({"dp", "tp", "pp", "vpp", "cp", "sp", "zero", "schedule", "tp_comm_overlap", "dp_overlap",
                   "param_gather_overlap", "ep", "etp", "ep_overlap", "ep_node_dedup", "cp_algorithm"});
    batch.only_keys({"global_batch_seqs", "micro_batch"});
    tr.only_keys({"precision", "recompute", "attention", "grad_reduce_bytes", "param_gather_bytes", "token_budget",
                  "optimizer", "compute_weight_copy", "framework", "evaluation", "fp8_recipe", "offload_layers",
                  "compile", "remat_tensors", "grouped_gemm_row_tile"});  // evaluation, compile: scenario.cpp
    PartialPlan out;
    ParallelPlan& p = out.plan;
    auto free_if_absent = [&](const JsonObject& o, const char* key, PlanField f) {
        if (!o.has(key)) out.free.add(f);
        return o.has(key);
    };
    const long long D = limits::max_parallel_degree;
    if (free_if_absent(par, "dp", PlanField::dp)) p.dp = par.count("dp", 1, D);
    if (free_if_absent(par, "tp", PlanField::tp)) p.tp = par.count("tp", 1, D);
    if (free_if_absent(par, "pp", PlanField::pp)) p.pp = par.count("pp", 1, D);
    if (free_if_absent(par, "vpp", PlanField::vpp)) p.vpp = par.count("vpp", 1, D);
    if (free_if_absent(par, "cp", PlanField::cp)) p.cp = par.count("cp", 1, D);
    if (free_if_absent(par, "ep", PlanField::ep)) p.ep = par.count("ep", 1, D);
    p.etp = par.count("etp", 1, D, 0);
    check_chip_product(p, par);
    p.ep_overlap = par.opt_bool("ep_overlap").value_or(false);
    p.ep_node_dedup = par.opt_bool("ep_node_dedup").value_or(false);
    out.cp_algorithm_stated = par.has("cp_algorithm");
    if (tr.has("grouped_gemm_row_tile"))
        p.gmm_row_tiles = gmm_row_tiles_at(tr, "grouped_gemm_row_tile"), out.gmm_row_tiles_stated = true;
    if (par.has("cp_algorithm"))
        p.cp_algorithm = par.one_of("cp_algorithm", {"ring", "all_gather"}) == "ring" ? ParallelPlan::CpAlgorithm::ring
                                                                                    : ParallelPlan::CpAlgorithm::all_gather;
    if (free_if_absent(par, "sp", PlanField::sp)) p.sp = par.boolean("sp");
    if (free_if_absent(par, "zero", PlanField::zero)) p.zero = par.count("zero", 0, 3);
    if (par.has("schedule")) {
        const std::string sched = par.one_of("schedule", {"gpipe", "1f1b", "interleaved-1f1b"});
        p.schedule = sched == "gpipe" ? Schedule::gpipe : sched == "1f1b" ? Schedule::one_f_one_b : Schedule::interleaved;
        if (p.schedule != Schedule::interleaved && out.free.has(PlanField::vpp)) {
            p.vpp = 1;  // a non-interleaved schedule fixes one chunk per stage
            out.free.remove(PlanField::vpp);
        }
        if (p.vpp > 1 && p.schedule != Schedule::interleaved)
            par.fail("vpp", "vpp > 1 needs the interleaved-1f1b schedule");
    } else {
        p.schedule = p.vpp > 1 ? Schedule::interleaved : Schedule::one_f_one_b;
    }
    if (free_if_absent(par, "tp_comm_overlap", PlanField::tp_comm_overlap)) {
        p.tp_comm_overlap = tp_overlap_at(par, "tp_comm_overlap");
    }
    if (free_if_absent(par, "dp_overlap", PlanField::dp_overlap)) p.dp_overlap = par.boolean("dp_overlap");
    if (free_if_absent(par, "param_gather_overlap", PlanField::param_gather_overlap))
        p.param_gather_overlap = par.boolean("param_gather_overlap");

    p.global_batch = batch.int_in("global_batch_seqs", 1, limits::max_global_batch_seqs);
    if (free_if_absent(batch, "micro_batch", PlanField::micro_batch)) {
        p.micro_batch = batch.int_in("micro_batch", 1, p.global_batch);
        if (!out.free.has(PlanField::dp) && p.global_batch % (p.micro_batch * p.dp) != 0)
            batch.fail("global_batch_seqs", "expected a multiple of micro_batch x dp (" +
                                                std::to_string(p.micro_batch * p.dp) + ")");
    }

    if (free_if_absent(tr, "precision", PlanField::precision)) {
        const auto prec = tr.one_of("precision", {"fp16", "bf16", "fp8", "int8", "fp4"});
        for (Precision c : {Precision::fp16, Precision::bf16, Precision::fp8, Precision::int8, Precision::fp4})
            if (prec == to_string(c)) p.precision = c;
    }
    // Read whatever the precision: a search may add fp8 to a 16-bit scenario, and then scales by this recipe.
    if (tr.has("fp8_recipe")) {
        const auto rec = tr.one_of("fp8_recipe", {"delayed", "tensorwise", "blockwise"});
        for (Fp8Recipe c : {Fp8Recipe::delayed, Fp8Recipe::tensorwise, Fp8Recipe::blockwise})
            if (rec == to_string(c)) p.fp8_recipe = c;
    }
    if (free_if_absent(tr, "recompute", PlanField::recompute)) {
        // podsim's modes, or a MaxText remat_policy by its name (custom: with training.remat_tensors). podsim's none
        // and selective come first: MaxText's "none" (no policy: nothing saved) is its full.
        const std::string rc = tr.string("recompute");
        if (rc == "none") p.recompute = Recompute::none;
        else if (rc == "selective") p.recompute = Recompute::selective;
        else {
            const RematPolicy policy = remat_policy_at(tr, "recompute", rc);
            p.recompute = policy.recompute, p.remat = policy.names;
        }
    }
    if (tr.has("remat_tensors") && !(tr.has("recompute") && tr.string("recompute") == "custom"))
        tr.fail("remat_tensors", "no remat_tensors unless recompute is \"custom\"");
    // Checked against the model's layers, the split and the system by check_split (models/result_checks.cpp).
    if (free_if_absent(tr, "offload_layers", PlanField::offload_layers))
        p.offload_layers = tr.count("offload_layers", 0, limits::max_parallel_degree);
    if (free_if_absent(tr, "attention", PlanField::attention)) p.attention = attention_kernel_at(tr, "attention");
    // Bytes per element on the wire: fp8 (1) to fp32 (4); 0.5 for 4-bit formats.
    p.grad_reduce_bytes = tr.number_in("grad_reduce_bytes", 0.5, 8, p.grad_reduce_bytes);
    p.param_gather_bytes = tr.number_in("param_gather_bytes", 0.5, 8, p.param_gather_bytes);
    if (tr.has("optimizer")) tr.one_of("optimizer", {"adamw"});
    p.compute_weight_copy = tr.opt_bool("compute_weight_copy").value_or(true);
    return out;
}

}  // namespace podsim
