#include <fmt/format.h>

#include "cli/commands.hpp"
#include "hardware/catalog.hpp"
#include "planner/claim_check.hpp"
#include "planner/cost.hpp"
#include "planner/goodput.hpp"
#include "planner/search.hpp"
#include "reports/format.hpp"
#include "reports/json_parts.hpp"

namespace podsim {

int cmd_check(const Args& args) {
    const CommonFlags f = parse_flags(args, "check");
    if (f.positional.size() != 1) throw UsageError("check: expected one CLAIM.json (see podsim check --help)");
    const Catalog cat = Catalog::load(default_catalog_dir());
    const Claim claim = load_claim(f.positional[0]);
    Scenario s = load_scenario(claim.scenario_file, cat);
    complete_scenario(s, CompletionOptions{true, budget_flags(f, "check"), nullptr});
    // The claim is judged against the best plan podsim finds for it (the search's highest-throughput plan on the
    // claim's system), so that a verdict of "not plausible" does not hinge on the scenario's own split.
    StepOptions given_opt;
    given_opt.budget = budget_flags(f, "check");
    given_opt.data = s.data ? &*s.data : nullptr;
    const StepResult given = simulate_step(s.model, s.system, s.plan, given_opt);
    SearchOptions so;
    so.budget = given_opt.budget;
    so.objective = Objective::mfu;
    so.top = 1;
    const SearchResult sr = search_plans(s, cat, load_reliability(default_catalog_dir()), so);
    const bool searched = !sr.ranked.empty() && (!given.feasible || sr.ranked.front().step.mfu > given.mfu);
    const StepResult& r = searched ? sr.ranked.front().step : given;
    const std::string plan_text = searched ? describe_plan(sr.ranked.front().plan) + " (best of " +
                                                 std::to_string(sr.plans) + " plans searched)"
                                           : "the scenario's plan";
    // For a claimed utilization, the plan with the most hardware FLOPs (recomputation included) is the fairest test.
    const StepResult* busiest = &r;
    const ParallelPlan* busiest_plan = searched ? &sr.ranked.front().plan : &s.plan;
    for (const auto& rp : sr.ranked)
        if (rp.step.hfu > busiest->hfu) busiest = &rp.step, busiest_plan = &rp.plan;
    if (given.feasible && given.hfu > busiest->hfu) busiest = &given, busiest_plan = &s.plan;
    ClaimVerdict v = check_claim(claim, s, r, *busiest);

    // What would meet the claim (issue #14): across 1-16x the claim's system, the plan that trains the tokens (the
    // claim's, else the scenario's budget) within the claimed days, failures included, at the least on-demand cost
    // (the fewest chips where there is no price); else the fastest there is.
    const RankedPlan* meets = nullptr;
    const RankedPlan* fastest = nullptr;
    std::string answer;
    SearchResult ar;
    Scenario t = s;
    if (claim.tokens) t.token_budget = *claim.tokens;
    if (t.token_budget > 0 && (claim.training_days || claim.cost_usd)) {
        SearchOptions q;
        q.objective = Objective::time;
        q.top = 16, q.confirm = 48;
        q.scales = {1, 2, 4, 8, 16};
        q.budget = given_opt.budget;
        ar = search_plans(t, cat, load_reliability(default_catalog_dir()), q);
        auto days_of = [](const RankedPlan& p) { return p.cost.goodput.effective_time_s / 86400; };
        auto usd_of = [](const RankedPlan& p) -> std::optional<double> {
            const OptionCost* oc = find_option(p.cost, PriceOption::on_demand);
            return oc ? oc->usd_outlay : std::nullopt;
        };
        for (const auto& p : ar.ranked) {
            if (!fastest || days_of(p) < days_of(*fastest)) fastest = &p;
            if (claim.training_days && days_of(p) > *claim.training_days) continue;
            const auto u = usd_of(p), mu = meets ? usd_of(*meets) : std::nullopt;
            if (!meets || (u && mu ? *u < *mu : p.system.chips < meets->system.chips)) meets = &p;
        }
        auto describe = [&](const RankedPlan& p) {
            const auto u = usd_of(p);
            return fmt::format("{} ({} chips) with {}: {:.1f} days{}", p.system.label, p.system.chips,
                               describe_plan(p.plan), days_of(p),
                               u ? ", " + money(*u) + " on demand" : std::string(", no price"));
        };
        if (claim.training_days)
            answer = meets ? fmt::format("what meets {:g} days for {} tokens: {}", *claim.training_days, large_count(t.token_budget),
                                         describe(*meets))
                     : fastest ? fmt::format("nothing up to 16x this system trains {} tokens in {:g} days; the "
                                             "fastest: {}", large_count(t.token_budget), *claim.training_days, describe(*fastest))
                               : "";
        if (claim.cost_usd) {
            std::optional<double> cheapest;
            for (const auto& p : ar.ranked)
                if (auto u = usd_of(p); u && (!claim.training_days || days_of(p) <= *claim.training_days))
                    cheapest = cheapest ? std::min(*cheapest, *u) : *u;
            if (cheapest) {
                const bool ok = *claim.cost_usd >= *cheapest / (1 + kModelTolerance);
                v.findings.push_back(fmt::format("cost: claimed {}; the cheapest plan podsim finds{} costs {} "
                                                 "on demand with failures", money(*claim.cost_usd),
                                                 claim.training_days ? " within the days" : "", money(*cheapest)));
                v.plausible = v.plausible && ok;
            }
        }
    }
    std::string out;
    if (f.format == "json") {
        // Each utilization figure sits with the plan it belongs to (the best-MFU plan, and the plan with the most
        // hardware FLOPs that a claimed utilization is tested against), so that they are never mixed up.
        Json j = output_head("check");
        auto plan_figures = [](const ParallelPlan& p, const StepResult& x) {
            return Json{{"plan", plan_json(p)}, {"description", describe_plan(p)}, {"step_time_s", x.step_time_s},
                        {"mfu", x.mfu}, {"hfu", x.hfu}};
        };
        j.update({{"claim", {{"name", claim.name}, {"file", f.positional[0]}}},
                  {"scenario", scenario_ref_json(s)},
                  {"plausible", v.plausible},
                  {"findings", v.findings},
                  {"best_mfu_plan", plan_figures(searched ? sr.ranked.front().plan : s.plan, r)},
                  {"best_mfu_plan_searched", searched},
                  {"plans_searched", sr.plans},
                  {"highest_hfu_plan", plan_figures(*busiest_plan, *busiest)},
                  {"scenario_plan", given.feasible ? plan_figures(s.plan, given) : Json(nullptr)},
                  {"tokens_in_claimed_days", v.tokens_in_claimed_days > 0 ? Json(v.tokens_in_claimed_days) : Json(nullptr)},
                  // null where the claim gives nothing to imply them from (no utilization; no tokens and days)
                  {"implied_tokens_at_claimed_utilization",
                   v.implied_tokens_at_claim > 0 ? Json(v.implied_tokens_at_claim) : Json(nullptr)},
                  {"implied_mfu", v.implied_mfu > 0 ? Json(v.implied_mfu) : Json(nullptr)},
                  {"notes", v.notes}});
        if (meets) {
            const OptionCost* oc = find_option(meets->cost, PriceOption::on_demand);
            j["meets_claim"] = {{"system", system_json(meets->system)}, {"plan", plan_json(meets->plan)},
                                {"description", describe_plan(meets->plan)},
                                {"days_with_failures", meets->cost.goodput.effective_time_s / 86400},
                                {"cost", oc ? option_cost_json(*oc) : Json(nullptr)}};
        } else {
            j["meets_claim"] = nullptr;
        }
        j["answer"] = answer.empty() ? Json(nullptr) : Json(answer);
        out = j.dump(2) + "\n";
    } else {
        out = fmt::format("claim: {}\n  scenario: {} ({})\n  closest simulated plan: {}\n", claim.name, s.name,
                          claim.scenario_file, plan_text);
        if (searched && given.feasible)
            out += fmt::format("  (the scenario's own plan reaches {:.1f}% MFU / {:.1f}% HFU)\n", 100 * given.mfu, 100 * given.hfu);
        for (const auto& x : v.findings) out += "  - " + x + "\n";
        if (v.implied_tokens_at_claim > 0)
            out += fmt::format("  - at the claimed utilization those days would train {} tokens\n",
                               large_count(v.implied_tokens_at_claim));
        out += fmt::format("  verdict: {}\n", v.plausible ? "PLAUSIBLE" : "NOT PLAUSIBLE");
        if (!answer.empty()) out += "  " + answer + "\n";
        for (const auto& n : v.notes) out += "  note: " + n + "\n";
    }
    emit(out, f.out);
    return 0;
}

}  // namespace podsim
