#include "models/plan_completion.hpp"

#include <algorithm>

#include "models/fast_step.hpp"
#include "models/plan_space.hpp"

namespace podsim {

namespace {

std::string value_text(PlanField f, const ParallelPlan& p) {
    switch (f) {
        case PlanField::dp: return std::to_string(p.dp);
        case PlanField::tp: return std::to_string(p.tp);
        case PlanField::pp: return std::to_string(p.pp);
        case PlanField::vpp: return std::to_string(p.vpp);
        case PlanField::cp: return std::to_string(p.cp);
        case PlanField::ep: return std::to_string(p.ep);
        case PlanField::sp: return p.sp ? "true" : "false";
        case PlanField::zero: return std::to_string(p.zero);
        case PlanField::micro_batch: return std::to_string(p.micro_batch);
        case PlanField::precision: return to_string(p.precision);
        case PlanField::recompute: return to_string(p.recompute);
        case PlanField::offload_layers: return std::to_string(p.offload_layers);
        case PlanField::attention: return to_string(p.attention);
        case PlanField::tp_comm_overlap: return to_string(p.tp_comm_overlap);
        case PlanField::dp_overlap: return p.dp_overlap ? "true" : "false";
        case PlanField::param_gather_overlap: return p.param_gather_overlap ? "true" : "false";
    }
    return "?";
}

constexpr PlanField kStructural[] = {PlanField::dp,   PlanField::tp,          PlanField::pp,
                                     PlanField::vpp,  PlanField::cp,          PlanField::ep,
                                     PlanField::sp,   PlanField::zero,        PlanField::micro_batch,
                                     PlanField::precision, PlanField::recompute, PlanField::offload_layers};

// The space: the given values pinned, the free ones as the planner's default space has them, within the stack.
PlanSpace restricted_space(const ModelSpec& m, const SystemSpec& sys, const PartialPlan& pp, const SoftwareStack& st) {
    const ParallelPlan& p = pp.plan;
    const PlanFields& f = pp.free;
    PlanSpace s = default_plan_space(m, sys, p);
    if (!f.has(PlanField::tp)) s.tp = {p.tp};
    if (!f.has(PlanField::pp)) s.pp = {p.pp};
    if (!f.has(PlanField::cp)) s.cp = {p.cp};
    if (!f.has(PlanField::ep)) s.ep = {p.ep}, s.try_expert_tp = false;
    if (!f.has(PlanField::dp)) s.dp_only = p.dp;
    if (!f.has(PlanField::vpp)) s.vpp = {p.vpp};
    // A stated split is taken as it ran: Megatron's rule that virtual stages divide the layers evenly is the
    // planner's, not every framework's (NeMo AutoModel pipelines 61 layers over 4 x 8 chunks).
    if (!f.has(PlanField::vpp) && !f.has(PlanField::pp)) s.layers = 0;
    else if (!st.interleaved_pipeline) s.vpp = {1};
    s.uneven_chunks = st.uneven_virtual_stages;
    if (!f.has(PlanField::zero)) s.zero = {p.zero}, s.zero_with_pipeline = true;  // stated: taken as it ran
    else s.zero = st.zero_stages;
    if (!f.has(PlanField::sp)) s.sp_only = p.sp ? 1 : 0;
    else if (st.sequence_parallel == SpPolicy::never) s.sp_only = 0;
    else if (st.sequence_parallel == SpPolicy::always) s.sp_only = 1;
    if (!f.has(PlanField::micro_batch)) {
        s.micro_batch = {p.micro_batch};
    } else if (!f.has(PlanField::dp)) {
        // The local batch is known: every micro-batch that divides it, up to 64 sequences.
        s.micro_batch.clear();
        const long long local = p.global_batch / std::max(1, p.dp);
        for (long long mb = 1; mb <= std::min<long long>(local, 64); ++mb)
            if (local % mb == 0) s.micro_batch.push_back(mb);
        if (s.micro_batch.empty()) s.micro_batch = {1};
    }
    if (!f.has(PlanField::precision)) s.precision = {p.precision};
    else {
        s.precision = {Precision::bf16};
        if (sys.chip.has_fp8() && st.fp8) s.precision.push_back(Precision::fp8);
    }
    if (!f.has(PlanField::recompute)) s.recompute = {p.recompute};
    // Offload: as stated; where free, every layer count the stack and system allow (the least that fits wins: more
    // only adds copies), else none.
    if (!f.has(PlanField::offload_layers)) s.offload_layers = {p.offload_layers};
    else if (!offload_choosable(pp, sys, st)) s.offload_layers = {0};
    else {
        s.offload_layers.clear();
        for (int k = 0; k < m.layers; ++k) s.offload_layers.push_back(k);
    }
    if (!f.has(PlanField::tp_comm_overlap)) s.tp_overlap_only_in_domain = false;
    return s;
}

}  // namespace

bool offload_choosable(const PartialPlan& pp, const SystemSpec& sys, const SoftwareStack& stack) {
    const ParallelPlan& p = pp.plan;
    const PlanFields& f = pp.free;
    return stack.activation_offload && sys.is_gpu && sys.node.host_link_bytes_per_s > 0 &&
           (f.has(PlanField::recompute) || p.recompute == Recompute::none) && (f.has(PlanField::pp) || p.pp == 1);
}

std::string settle_offload(PartialPlan& pp, const SystemSpec& sys, const SoftwareStack& stack) {
    if (!pp.free.has(PlanField::offload_layers))
        return pp.plan.offload_layers > 0 && !stack.activation_offload
                   ? "the framework (" + stack.id + ") does not offload activations (its activation_offload is none)"
                   : "";
    if (!offload_choosable(pp, sys, stack)) pp.free.remove(PlanField::offload_layers), pp.plan.offload_layers = 0;
    return "";
}

PlanCompletion complete_plan(const ModelSpec& m, const SystemSpec& sys, const PartialPlan& partial,
                             const SoftwareStack& stack, const CompletionOptions& opt) {
    PlanCompletion out;
    out.plan = partial.plan;
    if (!partial.free.any_structural()) {
        out.found = true;
        return out;
    }
    const PlanSpace space = restricted_space(m, sys, partial, stack);
    const size_t size = for_each_plan(sys, partial.plan, space, [](const ParallelPlan&) {});
    StepEstimator est(m, sys, opt.use_profiles, opt.budget, opt.kernels);
    double best_s = 0;
    Reject first_reject = Reject::none;
    if (static_cast<long long>(size) <= opt.budget.max_completion_plans) for_each_plan(sys, partial.plan, space, [&](const ParallelPlan& cand) {
        ++out.plans_tried;
        const StepEstimate e = est.estimate(cand);
        if (!e.feasible()) {
            if (first_reject == Reject::none || e.reject == Reject::memory) first_reject = e.reject;
            return;
        }
        ++out.plans_feasible;
        if (!out.found || e.step_time_s < best_s) out.found = true, best_s = e.step_time_s, out.plan = cand;
    });
    if (!out.found) {
        // Nothing fits: the most memory-frugal completion, simulated as it is (its reasons then say why).
        ParallelPlan& p = out.plan;
        const PlanFields& f = partial.free;
        if (f.has(PlanField::recompute)) p.recompute = Recompute::full;
        if (f.has(PlanField::offload_layers)) p.offload_layers = 0;
        if (f.has(PlanField::micro_batch)) p.micro_batch = 1;
        if (f.has(PlanField::zero)) {
            int z = *std::max_element(stack.zero_stages.begin(), stack.zero_stages.end());
            if (p.pp > 1) z = std::min(z, 1);
            p.zero = z;
        }
        if (f.has(PlanField::sp)) p.sp = p.tp > 1 && stack.sequence_parallel != SpPolicy::never;
        if (f.has(PlanField::vpp)) p.vpp = 1, p.schedule = Schedule::one_f_one_b;
        if (f.has(PlanField::precision)) p.precision = Precision::bf16;
        if (f.has(PlanField::dp)) p.dp = std::max(1, sys.chips / std::max(1, p.tp * p.pp * p.cp));
        out.reason = static_cast<long long>(size) > opt.budget.max_completion_plans
                         ? "the free fields span " + std::to_string(size) + " plans, over the completion budget of " +
                               std::to_string(opt.budget.max_completion_plans) + ": state more of the plan"
                     : out.plans_tried == 0
                         ? "no plan of the space matches the given fields and the system's chip count"
                         : std::to_string(out.plans_tried) + " plans tried, none feasible (" +
                               to_string(first_reject) + ")";
    }
    // Offload is reported where it was a choice (a stack and system that allow it), like ep only for MoE models.
    const bool offload_choice = space.offload_layers.size() > 1;
    for (PlanField f : kStructural)
        if (partial.free.has(f) && !(f == PlanField::ep && !m.moe.enabled()) &&
            !(f == PlanField::offload_layers && !offload_choice))
            out.chosen.push_back(std::string(to_string(f)) + " = " + value_text(f, out.plan) +
                                 (out.found ? "" : " (fallback)"));
    return out;
}

}  // namespace podsim
