#include "cli/commands.hpp"
#include "hardware/catalog.hpp"
#include "models/scenario.hpp"
#include "models/step.hpp"
#include "reports/cost.hpp"
#include "reports/plan_report.hpp"

namespace podsim {

int cmd_run(const Args& args) {
    CommonFlags f = parse_flags(args, "run");
    if (f.positional.size() != 1) throw UsageError("run: expected one SCENARIO.json (see podsim run --help)");
    const Catalog cat = Catalog::load(default_catalog_dir());
    const Scenario s = load_scenario(f.positional[0], cat);
    const StepResult r = simulate_step(s.model, s.system, s.plan);
    const CostReport c = cost_report(s.system, r, s.token_budget, cat, s.region);
    emit(f.format == "json" ? plan_json(s, r, c).dump(2) + "\n" : plan_text(s, r, c), f.out);
    return r.feasible ? 0 : 3;  // an impossible plan is a result, but not a success
}

}  // namespace podsim
