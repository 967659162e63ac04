#include "planner/search.hpp"

#include <algorithm>
#include <numeric>
#include <chrono>
#include <cmath>
#include <memory>
#include <queue>
#include <stdexcept>

#include <fmt/format.h>

#include "planner/parallel.hpp"
#include "sim/network_backend.hpp"

namespace podsim {

const char* to_string(Objective o) {
    switch (o) {
        case Objective::time: return "time";
        case Objective::cost: return "cost";
        case Objective::mfu: return "mfu";
    }
    return "?";
}

std::optional<Objective> objective_from_string(const std::string& s) {
    if (s == "time") return Objective::time;
    if (s == "cost") return Objective::cost;
    if (s == "mfu") return Objective::mfu;
    return std::nullopt;
}

std::string describe_plan(const ParallelPlan& p) {
    std::string s = fmt::format("tp {} pp {}", p.tp, p.pp);
    if (p.vpp > 1) s += fmt::format(" (vpp {})", p.vpp);
    s += fmt::format(" dp {} cp {}{}", p.dp, p.cp, p.sp ? " sp" : "");
    if (p.ep > 1 || p.etp > 0) s += fmt::format(" ep {} etp {}", p.ep, p.expert_tp());
    s += fmt::format(" mb {} zero {} rc {} {}", p.micro_batch, p.zero, to_string(p.recompute), to_string(p.precision));
    if (p.offload_layers > 0) s += fmt::format(" off {}", p.offload_layers);
    return s;
}

std::string short_plan(const ParallelPlan& p) {
    std::string s = fmt::format("tp{} pp{}", p.tp, p.pp);
    if (p.vpp > 1) s += fmt::format("x{}", p.vpp);
    s += fmt::format(" dp{}", p.dp);
    if (p.cp > 1) s += fmt::format(" cp{}", p.cp);
    if (p.ep > 1) s += fmt::format(" ep{}", p.ep) + (p.expert_tp() > 1 ? fmt::format(" etp{}", p.expert_tp()) : "");
    return s + fmt::format("{} mb{} z{} rc:{} {}{}", p.sp ? " sp" : "", p.micro_batch, p.zero, to_string(p.recompute),
                           to_string(p.precision), p.offload_layers > 0 ? fmt::format(" off{}", p.offload_layers) : "");
}

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct Candidate {
    double score;
    size_t system;
    ParallelPlan plan;
    StepEstimate est;
    size_t index;  // order of enumeration over all systems: equal scores resolve to the earliest plan
    // max-heap: worst kept on top; a tie keeps the earlier plan, whatever the last bits of the scores
    bool operator<(const Candidate& o) const { return score < o.score || (score == o.score && index < o.index); }
};

// Lower is better: seconds per token, dollars per token, or minus MFU.
double score_of(Objective o, double tokens_per_s, double mfu, std::optional<double> usd_per_hour) {
    switch (o) {
        case Objective::time: return 1 / tokens_per_s;
        case Objective::cost: return *usd_per_hour / 3600 / tokens_per_s;
        case Objective::mfu: return -mfu;
    }
    return 0;
}

}  // namespace

SearchResult search_plans(const Scenario& s, const Catalog& cat, const ReliabilityInputs& rel, const SearchOptions& o) {
    const ReliabilityInputs rel_s = with_overrides(rel, s.reliability);
    SearchResult res;
    res.objective = o.objective;
    res.price = o.price;

    // --- the systems: the scenario's and its what-if sizes ---------------------------------------------------------
    std::vector<SystemSpec> systems;
    std::vector<std::optional<double>> usd_per_hour;
    for (double k : o.scales) {
        const long long chips = std::llround(s.system.chips * k);
        auto sys = chips > 0 && chips < (1 << 24) ? cat.resized(s.system, static_cast<int>(chips)) : std::nullopt;
        if (!sys) {
            res.skipped_scales.push_back(fmt::format("x{:g} ({} chips): no {} system of that size", k, chips,
                                                     s.system.is_gpu ? s.system.node.id : s.system.chip.name));
            continue;
        }
        if (std::any_of(systems.begin(), systems.end(), [&](const SystemSpec& x) { return x.chips == sys->chips; }))
            continue;
        systems.push_back(*sys);
        usd_per_hour.push_back(system_usd_per_hour(cat, *sys, s.region, o.price, s.negotiated ? &*s.negotiated : nullptr));
        if (o.objective == Objective::cost && !usd_per_hour.back())
            throw std::runtime_error("the cost objective needs the " + std::string(to_string(o.price)) + " price of " +
                                     (sys->is_gpu ? sys->node.id : sys->chip.id) +
                                     ", and the catalog has none (on-premise or not sold that way); use time or mfu");
    }
    if (systems.empty()) throw std::runtime_error("no system to search: every requested scale was skipped");

    // --- screening: every plan through the closed form; keep the best for the engine --------------------------------
    std::vector<PlanSpace> spaces;
    size_t total = 0;
    for (const auto& sys : systems) {
        spaces.push_back(o.space ? *o.space : default_plan_space(s.model, sys, s.plan));
        if (!s.stack.activation_offload) spaces.back().offload_layers = {0};  // plans the framework can run
        if (o.constraints.any())
            if (const std::string why = constrain(spaces.back(), o.constraints, sys); !why.empty())
                res.skipped_scales.push_back(sys.label + ": " + why);
        total += for_each_plan(sys, s.plan, spaces.back(), [](const ParallelPlan&) {});
    }
    const size_t keep = static_cast<size_t>(std::max({o.confirm, o.top, o.refine, 1}));
    std::priority_queue<Candidate> best;           // overall, by the objective
    std::vector<std::optional<Candidate>> fastest(systems.size());  // per system, for the Pareto front
    std::vector<double> input_s(systems.size(), 0);  // the input pipeline's time per step on each system
    if (s.data)
        for (size_t si = 0; si < systems.size(); ++si)
            input_s[si] = input_timing(*s.data, systems[si], s.plan.global_batch, s.model.seq_len).per_step_s;
    auto t0 = Clock::now();
    size_t done = 0, seq = 0;
    const int jobs = std::max(1, o.jobs);
    for (size_t si = 0; si < systems.size(); ++si) {
        const SystemSpec& sys = systems[si];
        // One estimator per worker (each caches what its plans share); plans are screened in blocks on every
        // worker, then taken in enumeration order, so the result does not depend on the number of workers.
        std::vector<std::unique_ptr<StepEstimator>> est(static_cast<size_t>(jobs));
        SystemSearch ss;
        std::map<Reject, std::pair<double, ParallelPlan>> nearest;  // per reason: (how far over, plan)
        ss.label = sys.label;
        ss.chips = sys.chips;
        auto take = [&](const ParallelPlan& p, StepEstimate e) {
            if (o.progress && (++done & 0x3fff) == 0) o.progress(done, total);
            ++ss.plans;
            const size_t index = seq++;
            // The input pipeline is the same for every plan of a system (each host feeds its share of the batch):
            // the closed form's step waits for it as the engine's does (simulate_step).
            if (e.feasible() && input_s[si] > 0) {
                const double with = step_with_input_s(e.step_time_s, input_s[si], s.data->prefetch_steps);
                if (with > e.step_time_s) {
                    const double scale = e.step_time_s / with;
                    e.breakdown.input_wait_s = with - e.step_time_s;
                    e.step_time_s = with, e.tokens_per_s *= scale, e.mfu *= scale, e.hfu *= scale;
                }
            }
            if (!e.feasible()) {
                // The example of each reason is its nearest miss (for memory: the least over HBM), the plan a
                // user would try to rescue, not the most absurd one; the first of the reason otherwise.
                const double miss = e.reject == Reject::memory && e.hbm_bytes > 0 ? e.memory_bytes / e.hbm_bytes : 0;
                auto [it, fresh] = nearest.try_emplace(e.reject, miss, p);
                if (!fresh && miss < it->second.first) it->second = {miss, p};
                ++ss.rejected[e.reject];
                return;
            }
            ++ss.feasible;
            Candidate c{score_of(o.objective, e.tokens_per_s, e.mfu, usd_per_hour[si]), si, p, e, index};
            if (!fastest[si] || e.step_time_s < fastest[si]->est.step_time_s) fastest[si] = c;
            if (best.size() < keep) best.push(c);
            else if (c.score < best.top().score) best.pop(), best.push(c);
        };
        constexpr size_t kBlock = 8192;
        std::vector<ParallelPlan> block;
        std::vector<StepEstimate> estimates;
        auto screen_block = [&] {
            estimates.assign(block.size(), StepEstimate{});
            parallel_for(block.size(), jobs, [&](size_t i, int w) {
                auto& e = est[static_cast<size_t>(w)];
                if (!e) e = std::make_unique<StepEstimator>(s.model, sys, o.use_profiles, o.budget);
                estimates[i] = e->estimate(block[i]);
            });
            for (size_t i = 0; i < block.size(); ++i) take(block[i], estimates[i]);
            block.clear();
        };
        for_each_plan(sys, s.plan, spaces[si], [&](const ParallelPlan& p) {
            block.push_back(p);
            if (block.size() == kBlock) screen_block();
        });
        screen_block();
        for (const auto& [why_class, miss] : nearest) {
            StepOptions so;
            so.use_profiles = o.use_profiles;
            so.budget = o.budget;
            const StepResult r = simulate_step(s.model, sys, miss.second, so);
            std::string why;
            for (size_t k = 0; k < r.infeasible.size(); ++k)
                if (std::find(r.infeasible.begin(), r.infeasible.begin() + k, r.infeasible[k]) == r.infeasible.begin() + k)
                    why += (why.empty() ? "" : "; ") + r.infeasible[k];
            ss.example[why_class] = describe_plan(miss.second) + ": " + why;
        }
        nearest.clear();
        res.plans += ss.plans;
        res.feasible += ss.feasible;
        res.systems.push_back(std::move(ss));
    }
    if (o.progress) o.progress(total, total);
    res.screen_s = since(t0);

    // --- confirmation: the engine re-simulates the kept plans; its figures are the ones reported -----------------
    std::vector<Candidate> chosen;
    while (!best.empty()) chosen.push_back(best.top()), best.pop();
    for (auto& f : fastest)
        if (f && std::none_of(chosen.begin(), chosen.end(), [&](const Candidate& c) {
                return c.system == f->system && describe_plan(c.plan) == describe_plan(f->plan);
            }))
            chosen.push_back(*f);
    t0 = Clock::now();
    StepOptions so;
    so.use_profiles = o.use_profiles;
    so.budget = o.budget;
    so.evaluation = s.evaluation;  // time to train and dollars count the scenario's evaluation passes
    so.data = s.data ? &*s.data : nullptr;  // the input pipeline: a step it cannot feed waits
    // Each kept plan through the engine on the workers, each into its own slot; then in the heap's order. The
    // engine's work grows with the tasks of a step (stages x chunks x micro-batches, from tens to tens of
    // thousands), so the largest are started first: taken in heap order, one large plan started last kept the
    // other worker idle for most of the confirmation.
    std::vector<size_t> order(chosen.size());
    std::iota(order.begin(), order.end(), size_t{0});
    auto tasks = [&](size_t i) {
        const ParallelPlan& p = chosen[i].plan;
        return static_cast<double>(p.pp) * std::max(1, p.vpp) * static_cast<double>(std::max(1LL, p.micro_batches()));
    };
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return tasks(a) > tasks(b); });
    std::vector<std::optional<RankedPlan>> confirmed(chosen.size());
    parallel_for(chosen.size(), jobs, [&](size_t k, int) {
        const size_t i = order[k];
        const Candidate& c = chosen[i];
        RankedPlan rp;
        rp.system = systems[c.system];
        rp.plan = c.plan;
        rp.screened = c.est;
        rp.step = simulate_step(s.model, rp.system, c.plan, so);
        if (!rp.step.feasible) return;  // the closed form and the engine share their checks; kept for safety
        rp.cost = cost_report(s.model, rp.system, rp.step, s.token_budget, cat, s.region, rel_s,
                              s.negotiated ? &*s.negotiated : nullptr);
        rp.usd_per_hour = usd_per_hour[c.system];
        rp.score = score_of(o.objective, rp.step.tokens_per_s, rp.step.mfu, rp.usd_per_hour);
        rp.enumeration_index = c.index;
        confirmed[i] = std::move(rp);
    });
    for (auto& rp : confirmed)
        if (rp) res.ranked.push_back(std::move(*rp));
    res.confirmed = res.ranked.size();
    // Ties (equivalent plans, below) in enumeration order, so that the plan shown for them does not depend on
    // which one the screening heap happened to return first.
    std::sort(res.ranked.begin(), res.ranked.end(), [](const RankedPlan& a, const RankedPlan& b) {
        return a.score < b.score || (a.score == b.score && a.enumeration_index < b.enumeration_index);
    });
    // Plans that differ only in a setting with no effect here (Megatron's selective recomputation under flash
    // attention, ZeRO-1 without data parallelism) give identical results: fold them into the first.
    std::vector<RankedPlan> folded;
    for (auto& rp : res.ranked) {
        auto same = std::find_if(folded.begin(), folded.end(), [&](const RankedPlan& k) {
            return k.system.chips == rp.system.chips && k.step.step_time_s == rp.step.step_time_s &&
                   k.step.memory.total_bytes == rp.step.memory.total_bytes;
        });
        if (same != folded.end()) same->equivalents.push_back(describe_plan(rp.plan));
        else folded.push_back(std::move(rp));
    }
    res.ranked = std::move(folded);
    res.confirm_s = since(t0);

    // --- refinement with SimGrid --------------------------------------------------------------------------------
    t0 = Clock::now();
    for (int i = 0; i < o.refine && i < static_cast<int>(res.ranked.size()); ++i) {
        RankedPlan& rp = res.ranked[i];
        const CollectiveTimer timer(rp.system, NetworkBackend::simgrid);
        StepOptions ro = so;
        ro.timer = &timer;
        rp.simgrid_step_s = simulate_step(s.model, rp.system, rp.plan, ro).step_time_s;
        ++res.refined;
    }
    res.refine_s = since(t0);

    // --- Pareto front (time to train vs dollars, failures included) and cost advice -----------------------------
    auto option_cost = [&](const RankedPlan& rp) -> const OptionCost* {
        const OptionCost* oc = find_option(rp.cost, o.price);
        return oc && oc->usd_outlay ? oc : nullptr;
    };
    if (s.token_budget <= 0) {
        res.advice_note = "the scenario gives no training.token_budget, so there is no time to train or total cost";
        return res;
    }
    for (size_t i = 0; i < res.ranked.size(); ++i) {
        const OptionCost* a = option_cost(res.ranked[i]);
        if (!a) continue;
        bool dominated = false;
        for (size_t j = 0; j < res.ranked.size() && !dominated; ++j) {
            const OptionCost* b = option_cost(res.ranked[j]);
            if (j == i || !b) continue;
            const bool no_worse = b->effective_time_s <= a->effective_time_s &&
                                  *b->usd_outlay <= *a->usd_outlay;
            const bool better = b->effective_time_s < a->effective_time_s || *b->usd_outlay < *a->usd_outlay;
            dominated = no_worse && (better || j < i);  // of equal points, the better-ranked one stands for all
        }
        if (!dominated) res.pareto.push_back(i);
    }
    std::sort(res.pareto.begin(), res.pareto.end(), [&](size_t a, size_t b) {
        return option_cost(res.ranked[a])->effective_time_s < option_cost(res.ranked[b])->effective_time_s;
    });
    if (res.pareto.empty()) {
        res.advice_note = std::string("the catalog has no ") + to_string(o.price) + " price for this system";
        return res;
    }
    for (size_t i : res.pareto) {
        const OptionCost* c = option_cost(res.ranked[i]);
        if (o.deadline_days && c->effective_time_s <= *o.deadline_days * 86400 &&
            (!res.cheapest_within_deadline ||
             *c->usd_outlay < *option_cost(res.ranked[*res.cheapest_within_deadline])->usd_outlay))
            res.cheapest_within_deadline = i;
        if (o.budget_usd && *c->usd_outlay <= *o.budget_usd &&
            (!res.fastest_within_budget ||
             c->effective_time_s < option_cost(res.ranked[*res.fastest_within_budget])->effective_time_s))
            res.fastest_within_budget = i;
    }
    if (o.deadline_days && !res.cheapest_within_deadline)
        res.advice_note += fmt::format("no plan found meets the {:g}-day deadline (fastest: {:.1f} days). ", *o.deadline_days,
                                       option_cost(res.ranked[res.pareto.front()])->effective_time_s / 86400);
    if (o.budget_usd && !res.fastest_within_budget)
        res.advice_note += fmt::format("no plan found fits the ${:.4g} budget (cheapest: ${:.4g}). ", *o.budget_usd,
                                       *option_cost(res.ranked[res.pareto.back()])->usd_outlay);
    return res;
}

}  // namespace podsim
