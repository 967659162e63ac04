// What a report shows, computed: the scenario's plan simulated (with its timeline) and costed, the strategies on
// the scenario's system and over what-if sizes searched, the best plan re-simulated, and which plan to provision.
// Rendering it (charts, Markdown, HTML, provisioning commands) is reports/report.hpp's job.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hardware/catalog.hpp"
#include "models/plan.hpp"
#include "models/scenario.hpp"
#include "models/step.hpp"
#include "planner/cost.hpp"
#include "planner/accuracy.hpp"
#include "planner/goodput.hpp"
#include "planner/search.hpp"

namespace podsim {

struct ReportOptions {
    Objective objective = Objective::time;
    PriceOption price = PriceOption::on_demand;
    int top = 8;
    std::vector<double> scales = {0.25, 0.5, 1, 2, 4};  // the scaling curve and the Pareto front
    bool use_profiles = true;
    SimBudget budget;  // what one simulation may use (max_tasks, max_memory)
    std::function<void(size_t, size_t)> progress;
    PlanConstraints constraints;  // as SearchOptions::constraints
    std::optional<double> deadline_days, budget_usd;  // the brief: the decision names the plans that meet it
    const Accuracy* accuracy = nullptr;               // for the error band beside days and dollars
};

struct Report {
    Scenario scenario;
    ReportOptions options;
    StepResult scenario_step;        // with timeline
    CostReport scenario_cost;        // its price_region is where the provisioned plan is priced
    SearchResult strategies;         // on the scenario's system
    SearchResult scaling;            // over the scales
    std::optional<StepResult> best_step;  // the best plan on the scenario's system, with timeline
    std::optional<CostReport> best_cost;
    ParallelPlan provisioned;        // the plan to provision: the best one found, else the scenario's
    std::string provisioned_plan;    // which plan that is, in words
    std::optional<AccuracyBand> band;  // podsim's error band for this chip (options.accuracy)
};

Report build_report(const Scenario& s, const Catalog& cat, const ReliabilityInputs& rel, const ReportOptions& o);

}  // namespace podsim
