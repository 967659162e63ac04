// The report a manager can read and an engineer can trust: the scenario's plan and the best one found, where the
// time goes (per device class, per category), the strategies compared, time vs cost, scaling over chip counts,
// cost and goodput per purchase option, provisioning commands, and the assumptions with their sources.
// Written as Markdown (charts as SVG files beside it) and as one self-contained HTML file (charts inline).
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hardware/catalog.hpp"
#include "models/scenario.hpp"
#include "models/step.hpp"
#include "reports/cost.hpp"
#include "reports/planner.hpp"
#include "reports/provision.hpp"

namespace podsim {

struct ReportOptions {
    Objective objective = Objective::time;
    PriceOption price = PriceOption::on_demand;
    int top = 8;
    std::vector<double> scales = {0.25, 0.5, 1, 2, 4};  // the scaling curve and the Pareto front
    bool use_profiles = true;
    SimBudget budget;  // what one simulation may use (--max-tasks, --max-memory)
    std::function<void(size_t, size_t)> progress;
};

struct Report {
    Scenario scenario;
    ReportOptions options;
    StepResult scenario_step;        // with timeline
    CostReport scenario_cost;
    SearchResult strategies;         // on the scenario's system
    SearchResult scaling;            // over the scales
    std::optional<StepResult> best_step;  // the best plan on the scenario's system, with timeline
    std::optional<CostReport> best_cost;
    Provisioning provisioning;       // for the best plan (else the scenario's)
    std::string provisioned_plan;    // which plan the commands are for
};

Report build_report(const Scenario& s, const Catalog& cat, const ReliabilityInputs& rel, const ReportOptions& o);

// Chart id -> SVG document (the HTML inlines them; the Markdown links charts/<id>.svg).
std::map<std::string, std::string> report_charts(const Report& r);
std::string report_markdown(const Report& r, const std::map<std::string, std::string>& charts);
std::string report_html(const Report& r, const std::map<std::string, std::string>& charts);

}  // namespace podsim
