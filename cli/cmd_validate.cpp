#include "cli/commands.hpp"
#include "hardware/catalog.hpp"
#include "models/published_run.hpp"
#include "models/step.hpp"
#include "reports/validation_report.hpp"

namespace podsim {

int cmd_validate(const Args& args) {
    CommonFlags f = parse_flags(args, "validate");
    if (f.positional.empty()) throw UsageError("validate: expected one or more published-run JSON files");
    const Catalog cat = Catalog::load(default_catalog_dir());
    std::vector<ValidationRow> rows;
    for (const auto& file : f.positional) {
        for (const auto& run : load_published_runs(file, cat)) {
            StepOptions opt;
            opt.skip_engine_if_infeasible = false;  // the run happened: predict it even if our memory model disagrees
            const StepResult r = simulate_step(run.model, run.system, run.plan, opt);
            ValidationRow row;
            row.id = run.id;
            row.system = run.system.label;
            row.published_step_time_s = run.published_step_time_s;
            row.predicted_step_time_s = r.step_time_s;
            row.mfu = r.mfu;
            row.fits = r.memory.fits;
            for (const auto& why : r.infeasible) row.note += (row.note.empty() ? "" : "; ") + why;
            if (r.step_time_s <= 0)
                throw InputError(file, run.id, "cannot be simulated: " + row.note);
            rows.push_back(row);
        }
    }
    const auto v = summarize(rows);
    emit(f.format == "json" ? validation_json(v).dump(2) + "\n" : validation_text(v), f.out);
    return 0;
}

}  // namespace podsim
