#include "models/plan_space.hpp"

#include <algorithm>
#include <string>

#include "placement/placement.hpp"

namespace podsim {

namespace {

std::vector<int> divisors(int n) {
    std::vector<int> d;
    for (int i = 1; i <= n; ++i)
        if (n % i == 0) d.push_back(i);
    return d;
}

}  // namespace

PlanSpace default_plan_space(const ModelSpec& m, const SystemSpec& sys, const ParallelPlan& base) {
    PlanSpace s;
    for (int d : divisors(sys.chips)) {
        if (m.heads % d == 0 && m.ffn_hidden % d == 0 && (m.kv_heads % d == 0 || d % m.kv_heads == 0)) s.tp.push_back(d);
        if (m.seq_len % d == 0 && m.seq_len / d >= 512) s.cp.push_back(d);
        if (d <= m.layers) s.pp.push_back(d);
    }
    for (int v = 1; v <= 16; ++v) s.vpp.push_back(v);
    s.layers = m.layers;
    s.zero = {0, 1, 2, 3};
    for (long long mb = 1; mb <= 32; mb *= 2) s.micro_batch.push_back(mb);
    s.recompute = {Recompute::none, Recompute::selective, Recompute::minimal, Recompute::full};
    if (m.moe.enabled()) {
        s.ep.clear();
        for (int d : divisors(m.moe.experts)) s.ep.push_back(d);
        s.try_expert_tp = true;
    }
    s.precision = {base.precision};
    if (sys.chip.has_fp8() && base.precision != Precision::fp8) s.precision.push_back(Precision::fp8);
    if (sys.is_gpu && sys.node.host_link_bytes_per_s > 0)
        for (int i = 1; i < 8; ++i)
            if (const int k = m.layers * i / 8; k > s.offload_layers.back()) s.offload_layers.push_back(k);
    return s;
}

size_t for_each_plan(const SystemSpec& sys, const ParallelPlan& base, const PlanSpace& space,
                     const std::function<void(const ParallelPlan&)>& visit) {
    size_t n = 0;
    ParallelPlan p = base;
    for (int tp : space.tp) {
        p.tp_comm_overlap = space.tp_overlap_only_in_domain && !inside_one_nvlink_domain(sys, {tp}, 0)
                                ? TpOverlap::none
                                : base.tp_comm_overlap;
        std::vector<int> etps = {1};  // expert TP: whole experts, or split like the rest
        if (space.try_expert_tp && tp > 1) etps.push_back(tp);
        for (int cp : space.cp) {
            if (sys.chips % (tp * cp) != 0) continue;
            for (int pp : space.pp) {
                if (sys.chips % (tp * cp * pp) != 0) continue;
                const int dp = sys.chips / (tp * cp * pp);
                if (space.dp_only > 0 && dp != space.dp_only) continue;
                for (long long mb : space.micro_batch) {
                    if (base.global_batch % (mb * dp) != 0) continue;
                    const long long micro_batches = base.global_batch / (mb * dp);
                    for (int vpp : space.vpp) {
                        if (vpp > 1 && (pp == 1 || micro_batches % pp != 0)) continue;
                        if (vpp > 1 && space.layers > 0 && !space.uneven_chunks && space.layers % (pp * vpp) != 0)
                            continue;
                        if (space.layers > 0 && pp * vpp > space.layers) continue;
                        for (int zero : space.zero) {
                            if (pp > 1 && zero >= 2 && !space.zero_with_pipeline) continue;
                            for (int ep : space.ep)
                                for (int etp : etps) {
                                    if ((tp * cp * dp) % (etp * ep) != 0) continue;
                                    const int sp_lo = tp > 1 && space.sp_only == 1 ? 1 : 0;
                                    const int sp_hi = tp > 1 && (space.sp_only == 1 || (space.sp_only < 0 && space.try_sp)) ? 1 : 0;
                                    for (int sp = sp_lo; sp <= sp_hi; ++sp)
                                        for (Recompute rc : space.recompute)
                                            for (Precision pr : space.precision)
                                                for (int off : space.offload_layers) {
                                                    if (off > 0 && (pp > 1 || rc != Recompute::none)) continue;
                                                    p.tp = tp, p.cp = cp, p.pp = pp, p.dp = dp, p.vpp = vpp;
                                                    p.zero = zero, p.sp = sp, p.micro_batch = mb, p.recompute = rc;
                                                    p.precision = pr, p.offload_layers = off;
                                                    p.ep = ep, p.etp = space.try_expert_tp ? etp : base.etp;
                                                    // (a stated GPipe stays GPipe)
                                                    p.schedule = vpp > 1 ? Schedule::interleaved
                                                                 : base.schedule == Schedule::gpipe
                                                                     ? Schedule::gpipe
                                                                     : Schedule::one_f_one_b;
                                                    visit(p);
                                                    ++n;
                                                }
                                }
                        }
                    }
                }
            }
        }
    }
    return n;
}

namespace {

template <class T, class Name>
std::string keep_only(std::vector<T>& have, const std::vector<T>& wanted, const char* what, Name name) {
    if (wanted.empty()) return "";
    std::vector<T> kept;
    for (const T& v : have)
        if (std::find(wanted.begin(), wanted.end(), v) != wanted.end()) kept.push_back(v);
    if (!kept.empty()) {
        have = std::move(kept);
        return "";
    }
    std::string allowed;
    for (const T& v : have) allowed += (allowed.empty() ? "" : ",") + name(v);
    have.clear();
    return std::string(what) + " allows none of the values asked for (this model on this system admits " + allowed + ")";
}

}  // namespace

std::string constrain(PlanSpace& space, const PlanConstraints& c, const SystemSpec& sys) {
    auto num = [](auto v) { return std::to_string(v); };
    std::string why;
    auto note = [&](std::string w) {
        if (!w.empty() && why.empty()) why = std::move(w);
    };
    note(keep_only(space.tp, c.tp, "--tp", num));
    note(keep_only(space.pp, c.pp, "--pp", num));
    note(keep_only(space.cp, c.cp, "--cp", num));
    note(keep_only(space.ep, c.ep, "--ep", num));
    note(keep_only(space.vpp, c.vpp, "--vpp", num));
    note(keep_only(space.zero, c.zero, "--zero", num));
    note(keep_only(space.micro_batch, c.micro_batch, "--micro-batch", num));
    note(keep_only(space.precision, c.precision, "--precision", [](Precision p) { return std::string(to_string(p)); }));
    note(keep_only(space.recompute, c.recompute, "--recompute", [](Recompute r) { return std::string(to_string(r)); }));
    if (c.tp_in_nvlink_domain && sys.is_gpu) {
        const int domain = sys.domain_gpus();
        std::vector<int> in;
        for (int t : space.tp)
            if (t <= domain && domain % t == 0) in.push_back(t);
        if (in.empty()) note("--max-tp-domain nvlink: no TP degree the model admits fits one NVLink domain of " +
                             std::to_string(domain) + " GPUs");
        space.tp = in;
    }
    return why;
}

}  // namespace podsim
