#include "models/plan.hpp"

namespace podsim {

const char* to_string(Schedule s) {
    switch (s) {
        case Schedule::gpipe: return "gpipe";
        case Schedule::one_f_one_b: return "1f1b";
        case Schedule::interleaved: return "interleaved-1f1b";
    }
    return "?";
}
const char* to_string(Recompute r) {
    switch (r) {
        case Recompute::none: return "none";
        case Recompute::selective: return "selective";
        case Recompute::minimal: return "minimal";
        case Recompute::full: return "full";
    }
    return "?";
}
const char* to_string(Precision p) {
    switch (p) {
        case Precision::fp16: return "fp16";
        case Precision::bf16: return "bf16";
        case Precision::fp8: return "fp8";
    }
    return "?";
}
const char* to_string(AttentionKernel a) { return a == AttentionKernel::flash ? "flash" : "standard"; }
const char* to_string(TpOverlap t) {
    return t == TpOverlap::none ? "none" : t == TpOverlap::backward ? "backward" : "full";
}

ParallelPlan plan_from_json(const JsonObject& par, const JsonObject& batch, const JsonObject& tr) {
    par.only_keys({"dp", "tp", "pp", "vpp", "cp", "sp", "zero", "schedule", "tp_comm_overlap", "dp_overlap",
                   "param_gather_overlap", "ep", "etp", "ep_overlap", "ep_node_dedup", "cp_algorithm"});
    batch.only_keys({"global_batch_seqs", "micro_batch"});
    tr.only_keys({"precision", "recompute", "attention", "grad_reduce_bytes", "param_gather_bytes", "token_budget",
                  "optimizer", "compute_weight_copy"});
    ParallelPlan p;
    p.dp = static_cast<int>(par.positive_int("dp"));
    p.tp = static_cast<int>(par.positive_int("tp"));
    p.pp = static_cast<int>(par.positive_int("pp"));
    p.vpp = static_cast<int>(par.has("vpp") ? par.positive_int("vpp") : 1);
    p.cp = static_cast<int>(par.has("cp") ? par.positive_int("cp") : 1);
    p.ep = static_cast<int>(par.has("ep") ? par.positive_int("ep") : 1);
    p.etp = static_cast<int>(par.has("etp") ? par.positive_int("etp") : 0);
    p.ep_overlap = par.opt_bool("ep_overlap").value_or(false);
    p.ep_node_dedup = par.opt_bool("ep_node_dedup").value_or(false);
    if (par.has("cp_algorithm"))
        p.cp_algorithm = par.one_of("cp_algorithm", {"ring", "all_gather"}) == "ring" ? ParallelPlan::CpAlgorithm::ring
                                                                                    : ParallelPlan::CpAlgorithm::all_gather;
    p.sp = par.opt_bool("sp").value_or(false);
    p.zero = static_cast<int>(par.has("zero") ? par.integer("zero") : 0);
    if (p.zero < 0 || p.zero > 3) par.fail("zero", "expected 0, 1, 2 or 3");
    const std::string sched = par.has("schedule") ? par.one_of("schedule", {"gpipe", "1f1b", "interleaved-1f1b"})
                                                  : (p.vpp > 1 ? "interleaved-1f1b" : "1f1b");
    p.schedule = sched == "gpipe" ? Schedule::gpipe : sched == "1f1b" ? Schedule::one_f_one_b : Schedule::interleaved;
    if (p.vpp > 1 && p.schedule != Schedule::interleaved)
        par.fail("vpp", "vpp > 1 needs the interleaved-1f1b schedule");
    if (par.has("tp_comm_overlap")) {
        const auto t = par.one_of("tp_comm_overlap", {"none", "backward", "full"});
        p.tp_comm_overlap = t == "none" ? TpOverlap::none : t == "backward" ? TpOverlap::backward : TpOverlap::full;
    }
    p.dp_overlap = par.opt_bool("dp_overlap").value_or(true);
    p.param_gather_overlap = par.opt_bool("param_gather_overlap").value_or(true);

    p.global_batch = batch.positive_int("global_batch_seqs");
    p.micro_batch = batch.positive_int("micro_batch");
    if (p.global_batch % (p.micro_batch * p.dp) != 0)
        batch.fail("global_batch_seqs", "expected a multiple of micro_batch x dp (" +
                                            std::to_string(p.micro_batch * p.dp) + ")");

    const auto prec = tr.one_of("precision", {"fp16", "bf16", "fp8"});
    p.precision = prec == "fp16" ? Precision::fp16 : prec == "bf16" ? Precision::bf16 : Precision::fp8;
    const auto rc = tr.one_of("recompute", {"none", "selective", "minimal", "full"});
    p.recompute = rc == "none"        ? Recompute::none
                  : rc == "selective" ? Recompute::selective
                  : rc == "minimal"   ? Recompute::minimal
                                      : Recompute::full;
    if (tr.has("attention"))
        p.attention = tr.one_of("attention", {"standard", "flash"}) == "flash" ? AttentionKernel::flash
                                                                               : AttentionKernel::standard;
    if (tr.has("grad_reduce_bytes")) p.grad_reduce_bytes = tr.positive("grad_reduce_bytes");
    if (tr.has("param_gather_bytes")) p.param_gather_bytes = tr.positive("param_gather_bytes");
    if (tr.has("optimizer")) tr.one_of("optimizer", {"adamw"});
    p.compute_weight_copy = tr.opt_bool("compute_weight_copy").value_or(true);
    return p;
}

}  // namespace podsim
