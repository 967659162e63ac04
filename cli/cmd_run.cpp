#include <iostream>
#include <optional>

#include "cli/commands.hpp"
#include "hardware/catalog.hpp"
#include "models/scenario.hpp"
#include "models/step.hpp"
#include "planner/cost.hpp"
#include "reports/plan_report.hpp"
#include "reports/stages_report.hpp"

namespace podsim {

namespace {
// An impossible plan is an answer, but not a success: the output goes to stdout, the reasons with their JSON paths
// to stderr, no output file is written, and the exit status is 3.
int answer(const std::string& out, bool feasible, const std::string& file, const std::vector<std::string>& reasons,
           const std::vector<std::string>& paths, const std::string& out_file) {
    if (feasible) {
        emit(out, out_file);
        return 0;
    }
    std::cout << out;
    std::string why;
    for (size_t i = 0; i < reasons.size(); ++i) why += (why.empty() ? "" : "; ") + paths[i] + ": " + reasons[i];
    std::cerr << "podsim: infeasible plan: " << file << ": " << why << "\n";
    return 3;
}
}  // namespace

int cmd_run(const Args& args) {
    CommonFlags f = parse_flags(args, "run", {}, {"--stages"});
    // Without a scenario, the built-in default: the seed case (1.2T parameters on a v4-2048 slice).
    if (f.positional.empty()) f.positional.push_back(std::string(PODSIM_SCENARIO_DIR) + "/seed-1.2t-v4-2048.json");
    if (f.positional.size() != 1) throw UsageError("run: expected one SCENARIO.json (see podsim run --help)");
    const Catalog cat = Catalog::load(default_catalog_dir());
    Scenario s = load_scenario(f.positional[0], cat);
    StepOptions opt;
    opt.budget = budget_flags(f, "run");
    opt.evaluation = s.evaluation;
    opt.data = s.data ? &*s.data : nullptr;
    calib::KernelProfile kernels;
    if (!f.kernel_profile.empty()) {
        kernels = calib::load_kernel_profile(f.kernel_profile);
        opt.kernels = &kernels;
    }
    // Fields the scenario leaves out: the best feasible plan consistent with the rest (printed with the plan).
    complete_scenario(s, CompletionOptions{true, opt.budget, opt.kernels});
    const CollectiveTimer timer(s.system, use_simgrid(f) ? NetworkBackend::simgrid : NetworkBackend::analytical);
    opt.timer = &timer;
    if (f.switches.count("--stages")) {
        // The step's stages as data: the op list, the priced step and the task graph's size (JSON only).
        PricingOptions po;
        po.kernels = opt.kernels;
        po.budget = opt.budget;
        const StepCosts costs = price_step(s.model, s.system, s.plan, timer, po);
        const bool feasible = costs.reject == Reject::none;
        std::optional<LoweredStep> low;
        if (feasible) low = lower_step(costs);
        return answer(stages_json(s, costs, low ? &*low : nullptr).dump(2) + "\n", feasible, s.file, costs.reasons,
                      costs.reason_paths, f.out);
    }
    const StepResult r = simulate_step(s.model, s.system, s.plan, opt);
    const CostReport c = cost_report(s.model, s.system, r, s.token_budget, cat, s.region,
                                     with_overrides(load_reliability(default_catalog_dir()), s.reliability),
                                     s.negotiated ? &*s.negotiated : nullptr);
    const std::string out = f.format == "json" ? run_json(s, r, c).dump(2) + "\n" : plan_text(s, r, c);
    return answer(out, r.feasible, s.file, r.infeasible, r.infeasible_paths, f.out);
}

}  // namespace podsim
