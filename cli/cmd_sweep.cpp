// podsim sweep: a what-if grid, one row per point with the best plan found for it.
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "cli/commands.hpp"
#include "hardware/catalog.hpp"
#include "planner/goodput.hpp"
#include "reports/sweep_report.hpp"

namespace podsim {

int cmd_sweep(const Args& args) {
    const CommonFlags f = parse_flags(args, "sweep", {"--csv", "--json", "--deadline-days", "--budget-usd"}, {"--no-progress"});
    if (f.positional.size() != 1) throw UsageError("sweep: expected one SWEEP.json (see podsim sweep --help)");
    if (!f.out.empty() || f.format != "text")
        throw UsageError("sweep: use --csv FILE and/or --json FILE (without them the CSV goes to stdout)");
    const SimBudget budget = budget_flags(f, "sweep");
    SweepAdvice advice;
    if (f.values.count("--deadline-days")) advice.deadline_days = number_flag(f, "sweep", "--deadline-days", 0, 1e-6, 36'525);
    if (f.values.count("--budget-usd")) advice.budget_usd = usd_flag(f, "sweep", "--budget-usd");
    check_out(f.value("--csv"));  // before the points run, so a bad path fails at once
    check_out(f.value("--json"));
    const Catalog cat = Catalog::load(default_catalog_dir());
    const Sweep sw = load_sweep(f.positional[0], cat);
    const ReliabilityInputs rel = load_reliability(default_catalog_dir());
    const bool bar = !f.switches.count("--no-progress") && isatty(STDERR_FILENO);
    std::vector<SweepRow> rows;
    for (size_t i = 0; i < sw.points.size(); ++i) {
        if (bar) std::fprintf(stderr, "\r  point %zu / %zu", i + 1, sw.points.size()), std::fflush(stderr);
        rows.push_back(run_sweep_point(sw.points[i], sw.objective, cat, rel, budget, advice));
    }
    if (bar) std::fprintf(stderr, "\n");
    const std::string csv = sweep_csv(sw, rows);
    if (f.value("--csv").empty() && f.value("--json").empty()) std::cout << csv;
    if (!f.value("--csv").empty()) emit(csv, f.value("--csv"));
    if (!f.value("--json").empty()) emit(sweep_json(sw, rows).dump(2) + "\n", f.value("--json"));
    return 0;
}

}  // namespace podsim
