// podsim report: the Markdown + self-contained HTML report of a scenario, optionally with a Perfetto trace.
#include <filesystem>
#include <iostream>

#include "cli/commands.hpp"
#include "hardware/catalog.hpp"
#include "models/scenario.hpp"
#include "reports/atomic_write.hpp"
#include "planner/accuracy.hpp"
#include "planner/goodput.hpp"
#include "reports/report.hpp"
#include "reports/trace.hpp"

namespace podsim {

namespace {
// What a previous report directory may hold, and so what --out DIR may replace: its own files, and nothing else
// (an empty directory too). A directory with anything more is refused rather than deleted.
bool is_report_file(const std::string& rel) {
    if (rel == "report.md" || rel == "report.html" || rel == "trace.json" || rel == "charts") return true;
    return rel.rfind("charts/", 0) == 0 && rel.find('/', 7) == std::string::npos && rel.size() > 11 &&
           rel.compare(rel.size() - 4, 4, ".svg") == 0;
}
}  // namespace

int cmd_report(const Args& args) {
    const CommonFlags f =
        parse_flags(args, "report", {"--objective", "--price", "--top", "--scales", "--plan", "--deadline-days", "--budget-usd",
                     PODSIM_CONSTRAINT_FLAGS},
                    {"--trace", "--no-profiles", "--no-progress"});
    if (f.positional.size() != 1) throw UsageError("report: expected one SCENARIO.json (see podsim report --help)");
    if (f.out.empty()) throw UsageError("report: --out DIR is required (the report is several files)");
    if (f.format != "text") throw UsageError("report: --format does not apply (it writes Markdown, HTML and SVG)");
    ReportOptions o;
    o.objective = parse_objective("report", f.value("--objective", "time"));
    o.price = parse_price_option("report", f.value("--price", "on-demand"));
    o.top = int_flag(f, "report", "--top", 8, 1, 1'000);
    o.scales = number_list_flag(f, "report", "--scales", o.scales, 1.0 / 4096, 4096);
    o.budget = budget_flags(f, "report");
    o.use_profiles = !f.switches.count("--no-profiles");
    o.progress = progress_bar(f);
    o.constraints = constraint_flags(f, "report");
    if (f.values.count("--deadline-days")) o.deadline_days = number_flag(f, "report", "--deadline-days", 0, 1e-6, 36'525);
    if (f.values.count("--budget-usd")) o.budget_usd = usd_flag(f, "report", "--budget-usd");

    try {
        StagedDir::check(f.out, is_report_file, "podsim report");  // before the search, so a bad DIR fails at once
    } catch (const OutputError& e) {
        throw UsageError("report: " + std::string(e.what()));
    }

    const Catalog cat = Catalog::load(default_catalog_dir());
    Scenario s = load_scenario(f.positional[0], cat);
    complete_scenario(s, CompletionOptions{true, o.budget, nullptr});
    const Accuracy accuracy = load_accuracy(default_catalog_dir());
    o.accuracy = &accuracy;
    const Report r = as_usage_error("report", [&] { return build_report(s, cat, load_reliability(default_catalog_dir()), o); });
    const auto charts = report_charts(r);
    // Everything is rendered before anything is written; then the files are built in a temporary directory beside DIR
    // and renamed onto it whole: a failure part-way leaves nothing, and an old report is replaced in one step.
    const std::string md = report_markdown(r, charts), html = report_html(r, charts);
    // The trace shows one step of the plan --plan names: the report's best plan (default), the scenario's, or one
    // written out (as search prints plans); that one is simulated here with the report's options.
    const std::string which = f.value("--plan", "best");
    if (f.values.count("--plan") && !f.switches.count("--trace"))
        throw UsageError("report: --plan chooses the plan of the trace: give --trace with it");
    std::optional<StepResult> own;
    const StepResult* traced = nullptr;
    std::string traced_plan;
    if (which == "best") {
        traced = r.best_step ? &*r.best_step : &r.scenario_step;
        traced_plan = r.best_step ? describe_plan(r.provisioned) : describe_plan(s.plan) + " (the scenario's plan: no best plan found)";
    } else if (which == "scenario") {
        traced = &r.scenario_step, traced_plan = describe_plan(s.plan) + " (the scenario's plan)";
    } else {
        const ParallelPlan p = parse_plan_text("report", which, s.plan, s.system.chips);
        StepOptions so;
        so.use_profiles = o.use_profiles, so.budget = o.budget, so.record_timeline = true;
        so.data = s.data ? &*s.data : nullptr;
        own = simulate_step(s.model, s.system, p, so);
        if (!own->feasible) {
            std::string why;
            for (const auto& x : own->infeasible) why += (why.empty() ? "" : "; ") + x;
            throw UsageError("report: --plan \"" + which + "\" is not feasible: " + why);
        }
        traced = &*own, traced_plan = describe_plan(p);
    }
    const bool want_trace = f.switches.count("--trace") > 0;
    const std::string trace =
        want_trace && traced->feasible ? perfetto_trace(*traced, s.name, traced_plan).dump() + "\n" : "";
    try {
        StagedDir dir(f.out, is_report_file, "podsim report");
        for (const auto& [id, svg] : charts) dir.write("charts/" + id + ".svg", svg);
        dir.write("report.md", md);
        dir.write("report.html", html);
        if (!trace.empty()) dir.write("trace.json", trace);
        dir.commit();
    } catch (const OutputError& e) {
        throw UsageError("report: " + std::string(e.what()));
    }
    namespace fs = std::filesystem;
    const fs::path dir = f.out;
    std::cout << "podsim report: wrote " << (dir / "report.md").string() << ", " << (dir / "report.html").string() << " and "
              << charts.size() << " charts in " << (dir / "charts").string()
              << (trace.empty() ? "" : ", " + (dir / "trace.json").string() + " (open in ui.perfetto.dev)") << "\n";
    if (want_trace && !traced->feasible) std::cerr << "podsim: no trace: the scenario's plan is infeasible\n";
    if (!trace.empty()) std::cout << "  trace of " << traced_plan << "\n";
    return 0;
}

}  // namespace podsim
