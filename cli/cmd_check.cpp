#include <fmt/format.h>

#include "cli/commands.hpp"
#include "hardware/catalog.hpp"
#include "planner/claim_check.hpp"
#include "planner/goodput.hpp"
#include "planner/search.hpp"

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
    for (const auto& rp : sr.ranked)
        if (rp.step.hfu > busiest->hfu) busiest = &rp.step;
    if (given.feasible && given.hfu > busiest->hfu) busiest = &given;
    const ClaimVerdict v = check_claim(claim, s, r, *busiest);
    std::string out;
    if (f.format == "json") {
        Json j = {{"schema_version", 1}, {"claim", claim.name}, {"scenario", claim.scenario_file},
                  {"plausible", v.plausible}, {"findings", v.findings}, {"simulated_hfu", v.simulated_hfu},
                  {"simulated_mfu", v.simulated_mfu}, {"tokens_in_claimed_days", v.tokens_in_claimed_days},
                  {"implied_tokens_at_claimed_utilization", v.implied_tokens_at_claim},
                  {"implied_mfu", v.implied_mfu}, {"closest_plan", plan_text},
                  {"scenario_plan_mfu", given.feasible ? given.mfu : 0.0}};
        out = j.dump(2) + "\n";
    } else {
        out = fmt::format("claim: {}\n  scenario: {} ({})\n  closest simulated plan: {}\n", claim.name, s.name,
                          claim.scenario_file, plan_text);
        if (searched && given.feasible)
            out += fmt::format("  (the scenario's own plan reaches {:.1f}% MFU / {:.1f}% HFU)\n", 100 * given.mfu, 100 * given.hfu);
        for (const auto& x : v.findings) out += "  - " + x + "\n";
        if (v.implied_tokens_at_claim > 0)
            out += fmt::format("  - at the claimed utilization those days would train {:.3g} tokens\n",
                               v.implied_tokens_at_claim);
        out += fmt::format("  verdict: {}\n", v.plausible ? "PLAUSIBLE" : "NOT PLAUSIBLE");
    }
    emit(out, f.out);
    return 0;
}

}  // namespace podsim
