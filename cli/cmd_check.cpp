#include <fmt/format.h>

#include "cli/commands.hpp"
#include "hardware/catalog.hpp"
#include "reports/claim_check.hpp"

namespace podsim {

int cmd_check(const Args& args) {
    const CommonFlags f = parse_flags(args, "check");
    if (f.positional.size() != 1) throw UsageError("check: expected one CLAIM.json (see podsim check --help)");
    const Catalog cat = Catalog::load(default_catalog_dir());
    const Claim claim = load_claim(f.positional[0]);
    const Scenario s = load_scenario(claim.scenario_file, cat);
    const StepResult r = simulate_step(s.model, s.system, s.plan);
    const ClaimVerdict v = check_claim(claim, s, r);
    std::string out;
    if (f.format == "json") {
        Json j = {{"schema_version", 1}, {"claim", claim.name}, {"scenario", claim.scenario_file},
                  {"plausible", v.plausible}, {"findings", v.findings}, {"simulated_hfu", v.simulated_hfu},
                  {"simulated_mfu", v.simulated_mfu}, {"tokens_in_claimed_days", v.tokens_in_claimed_days},
                  {"implied_tokens_at_claimed_utilization", v.implied_tokens_at_claim},
                  {"implied_mfu", v.implied_mfu}};
        out = j.dump(2) + "\n";
    } else {
        out = fmt::format("claim: {}\n  closest simulated plan: {} ({})\n", claim.name, s.name, claim.scenario_file);
        for (const auto& x : v.findings) out += "  - " + x + "\n";
        if (v.implied_tokens_at_claim > 0)
            out += fmt::format("  - at the claimed utilization those days would train {:.3g} tokens\n",
                               v.implied_tokens_at_claim);
        out += fmt::format("  verdict: {}\n", v.plausible ? "PLAUSIBLE" : "NOT PLAUSIBLE");
    }
    emit(out, f.out);
    return 0;
}

}  // namespace podsim
