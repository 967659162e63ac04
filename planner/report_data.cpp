#include "planner/report_data.hpp"

#include <algorithm>

namespace podsim {

Report build_report(const Scenario& s, const Catalog& cat, const ReliabilityInputs& rel, const ReportOptions& o) {
    Report r;
    r.scenario = s;
    r.options = o;
    StepOptions so;
    so.use_profiles = o.use_profiles;
    so.budget = o.budget;
    so.record_timeline = true;
    so.evaluation = s.evaluation;
    so.data = s.data ? &*s.data : nullptr;
    r.scenario_step = simulate_step(s.model, s.system, s.plan, so);
    r.scenario_cost = cost_report(s.model, s.system, r.scenario_step, s.token_budget, cat, s.region,
                                  with_overrides(rel, s.reliability), s.negotiated ? &*s.negotiated : nullptr);

    SearchOptions q;
    q.constraints = o.constraints;
    q.objective = o.objective;
    q.price = o.price;
    q.top = o.top;
    q.confirm = std::max(o.top, 12);
    q.use_profiles = o.use_profiles;
    q.budget = o.budget;
    q.progress = o.progress;
    r.strategies = search_plans(s, cat, rel, q);
    q.scales = o.scales;
    q.confirm = 12;
    q.deadline_days = o.deadline_days, q.budget_usd = o.budget_usd;
    r.scaling = search_plans(s, cat, rel, q);

    if (o.accuracy) r.band = o.accuracy->band_for(s.system.chip.id, s.system.chip.name);
    r.provisioned = s.plan;
    r.provisioned_plan = "the scenario's plan";
    if (!r.strategies.ranked.empty()) {
        const RankedPlan& b = r.strategies.ranked.front();
        r.best_step = simulate_step(s.model, s.system, b.plan, so);
        r.best_cost = b.cost;
        r.provisioned = b.plan;
        r.provisioned_plan = "the best plan found: " + describe_plan(b.plan);
    }
    return r;
}

}  // namespace podsim
