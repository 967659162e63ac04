// podsim search: rank every plan of a scenario's model on its system (and what-if sizes of it).
#include <iostream>

#include "cli/commands.hpp"
#include "hardware/catalog.hpp"
#include "hardware/input_error.hpp"
#include "models/scenario.hpp"
#include "planner/search.hpp"
#include "reports/search_report.hpp"

namespace podsim {

SearchOptions search_options(const CommonFlags& f, const std::string& cmd) {
    SearchOptions o;
    o.objective = parse_objective(cmd, f.value("--objective", "time"));
    o.top = int_flag(f, cmd, "--top", 10, 1, 10'000);
    o.refine = int_flag(f, cmd, "--refine", 0, 0, 1'000);
    o.confirm = std::max(o.top, int_flag(f, cmd, "--confirm", 40, 1, 100'000));
    o.scales = number_list_flag(f, cmd, "--scales", {1}, 1.0 / 4096, 4096);
    o.price = parse_price_option(cmd, f.value("--price", "on-demand"));
    if (f.values.count("--deadline-days")) o.deadline_days = number_flag(f, cmd, "--deadline-days", 0, 1e-6, 36'525);
    if (f.values.count("--budget-usd")) o.budget_usd = usd_flag(f, cmd, "--budget-usd");
    o.budget = budget_flags(f, cmd);
    o.use_profiles = !f.switches.count("--no-profiles");
    o.progress = progress_bar(f);
    o.constraints = constraint_flags(f, cmd);
    o.jobs = jobs_flag(f, cmd);
    return o;
}

int cmd_search(const Args& args) {
    const CommonFlags f = parse_flags(args, "search",
                                      {"--objective", "--top", "--refine", "--confirm", "--scales", "--price",
                                       "--deadline-days", "--budget-usd", "--jobs", PODSIM_CONSTRAINT_FLAGS},
                                      {"--no-profiles", "--no-progress"});
    if (f.positional.size() != 1) throw UsageError("search: expected one SCENARIO.json (see podsim search --help)");
    const SearchOptions o = search_options(f, "search");
    const Catalog cat = Catalog::load(default_catalog_dir());
    const Scenario s = load_scenario(f.positional[0], cat);
    const SearchResult r =
        as_usage_error("search", [&] { return search_plans(s, cat, load_reliability(default_catalog_dir()), o); });
    const std::string out = f.format == "json" ? search_json(s, r, o.top).dump(2) + "\n" : search_text(s, r, o.top);
    if (r.ranked.empty()) {
        std::cout << out;
        std::cerr << "podsim: no feasible plan for " << s.file << " (reasons listed)\n";
        return 3;
    }
    emit(out, f.out);
    return 0;
}

}  // namespace podsim
