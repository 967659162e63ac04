// podsim report: the Markdown + self-contained HTML report of a scenario, optionally with a Perfetto trace.
#include <filesystem>
#include <iostream>

#include "cli/commands.hpp"
#include "hardware/catalog.hpp"
#include "models/scenario.hpp"
#include "reports/goodput.hpp"
#include "reports/report.hpp"
#include "reports/trace.hpp"

namespace podsim {

int cmd_report(const Args& args) {
    const CommonFlags f =
        parse_flags(args, "report", {"--objective", "--price", "--top", "--scales"}, {"--trace", "--no-profiles", "--no-progress"});
    if (f.positional.size() != 1) throw UsageError("report: expected one SCENARIO.json (see podsim report --help)");
    if (f.out.empty()) throw UsageError("report: --out DIR is required (the report is several files)");
    if (f.format != "text") throw UsageError("report: --format does not apply (it writes Markdown, HTML and SVG)");
    ReportOptions o;
    o.objective = parse_objective("report", f.value("--objective", "time"));
    o.price = parse_price_option("report", f.value("--price", "on-demand"));
    o.top = static_cast<int>(number_flag(f, "report", "--top", 8, 1));
    o.scales = number_list_flag(f, "report", "--scales", o.scales, 1e-6);
    o.use_profiles = !f.switches.count("--no-profiles");
    o.progress = progress_bar(f);

    const Catalog cat = Catalog::load(default_catalog_dir());
    const Scenario s = load_scenario(f.positional[0], cat);
    const Report r = as_usage_error("report", [&] { return build_report(s, cat, load_reliability(default_catalog_dir()), o); });
    const auto charts = report_charts(r);
    // Everything is rendered before anything is written; then the files go into DIR whole (emit: temp + rename).
    const std::string md = report_markdown(r, charts), html = report_html(r, charts);
    const std::string trace =
        f.switches.count("--trace") && r.scenario_step.feasible ? perfetto_trace(r.scenario_step, s.name).dump() + "\n" : "";
    namespace fs = std::filesystem;
    const fs::path dir = f.out;
    std::error_code ec;
    fs::create_directories(dir / "charts", ec);
    if (ec) throw UsageError("report: cannot create " + (dir / "charts").string() + ": " + ec.message());
    for (const auto& [id, svg] : charts) emit(svg, (dir / "charts" / (id + ".svg")).string());
    emit(md, (dir / "report.md").string());
    emit(html, (dir / "report.html").string());
    if (!trace.empty()) emit(trace, (dir / "trace.json").string());
    std::cout << "podsim report: wrote " << (dir / "report.md").string() << ", " << (dir / "report.html").string() << " and "
              << charts.size() << " charts in " << (dir / "charts").string()
              << (trace.empty() ? "" : ", " + (dir / "trace.json").string() + " (open in ui.perfetto.dev)") << "\n";
    if (f.switches.count("--trace") && !r.scenario_step.feasible)
        std::cerr << "podsim: no trace: the scenario's plan is infeasible\n";
    return 0;
}

}  // namespace podsim
