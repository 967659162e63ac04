#include <cstdio>
#include <optional>
#include <utility>

#include "cli/commands.hpp"
#include "hardware/catalog.hpp"
#include "models/published_run.hpp"
#include "models/step.hpp"
#include "planner/cost.hpp"
#include "planner/parallel.hpp"
#include "reports/plan_report.hpp"
#include "reports/validation_report.hpp"

namespace podsim {

int cmd_validate(const Args& args) {
    // --detail ID: the full plan report for one run, to see where its time goes.
    const CommonFlags f = parse_flags(args, "validate", {"--detail", "--jobs"}, {"--no-profiles"});
    const std::string detail = f.value("--detail");
    const bool no_profiles = f.switches.count("--no-profiles") > 0;
    if (f.positional.empty()) throw UsageError("validate: expected one or more published-run JSON files");
    const SimBudget budget = budget_flags(f, "validate");
    const Catalog cat = Catalog::load(default_catalog_dir());
    std::vector<ValidationRow> rows;
    bool detail_found = false;
    // Every record first; then their predictions on --jobs threads, each in its slot; then the rows in file order.
    // (SimGrid forks a child per simulation: one thread then.)
    std::vector<std::pair<std::string, PublishedRun>> all;
    for (const auto& file : f.positional)
        for (auto& run : load_published_runs(file, cat)) all.emplace_back(file, std::move(run));
    std::vector<std::optional<PublishedPrediction>> predicted(all.size());
    parallel_for(all.size(), use_simgrid(f) ? 1 : jobs_flag(f, "validate"), [&](size_t i, int) {
        const PublishedRun& run = all[i].second;
        if (!run.error.empty()) return;
        const CollectiveTimer timer(run.system, use_simgrid(f) ? NetworkBackend::simgrid : NetworkBackend::analytical);
        StepOptions opt;
        opt.use_profiles = !no_profiles;
        opt.timer = &timer;
        opt.budget = budget;
        predicted[i] = simulate_published(run, opt);
    });
    for (size_t i = 0; i < all.size(); ++i) {
        {
            const std::string& file = all[i].first;
            const PublishedRun& run = all[i].second;
            if (!run.error.empty()) {
                ValidationRow row;
                row.id = run.id;
                row.error = run.error;
                rows.push_back(row);
                continue;
            }
            const PublishedPrediction& pred = *predicted[i];
            const StepResult& r = pred.step;
            if (run.id == detail) {
                detail_found = true;
                Scenario s;
                s.file = file, s.name = run.id, s.model = run.model, s.system = run.system, s.plan = pred.plan;
                s.description = "published run; assumed: " + [&] {
                    std::string a;
                    for (const auto& x : run.assumptions) a += (a.empty() ? "" : "; ") + x;
                    return a;
                }() + (pred.escalation.empty() ? "" : "; " + pred.escalation);
                s.stack = run.stack;
                s.plan_choices = pred.chosen;
                emit(plan_text(s, r, cost_report(run.model, run.system, r, 0, cat, "",
                                                 load_reliability(default_catalog_dir()))),
                     "");
            }
            ValidationRow row;
            row.id = run.id;
            row.system = run.system.label, row.chip = run.system.chip.id, row.chips = run.system.chips;
            row.plan = pred.plan;
            row.published_step_time_s = run.published_step_time_s;
            row.predicted_step_time_s = r.step_time_s;
            row.mfu = r.mfu;
            row.fits = r.memory.fits;
            row.note = pred.escalation;
            row.chosen = pred.chosen;
            row.group = run.stack.id + " / " + run.system.chip.id;
            for (const auto& why : r.infeasible) row.note += (row.note.empty() ? "" : "; ") + why;
            if (r.step_time_s <= 0) row.error = file + ": " + run.id + ": cannot be simulated: " + row.note;
            rows.push_back(row);
        }
    }
    if (!detail.empty()) {
        if (!detail_found) throw UsageError("validate: --detail " + detail + ": no run with that id in the files given");
        return 0;
    }
    if (rows.empty()) throw UsageError("validate: the files hold no published runs: nothing to compare");
    const auto v = summarize(rows);
    emit(f.format == "json" ? validation_json(v).dump(2) + "\n" : validation_text(v), f.out);
    // Every run is reported; the exit status says whether some could not be predicted, and stderr says which.
    for (const auto& r : v.rows)
        if (!r.error.empty()) std::fprintf(stderr, "podsim: error: %s\n", r.error.c_str());
    return v.failed > 0 ? 1 : 0;
}

}  // namespace podsim
