// Money as planners meet it (issue #14): a commitment is paid over its whole term, negotiated prices and the
// buyer's own failure rates replace the catalog's where a scenario gives them.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "models/scenario.hpp"
#include "models/step.hpp"
#include "planner/cost.hpp"
#include "planner/goodput.hpp"
#include "tests/helpers.hpp"

using namespace podsim;
using podsim::test::approx;

namespace {

const ReliabilityInputs& rel() {
    static const ReliabilityInputs r = load_reliability(default_catalog_dir());
    return r;
}

nlohmann::json scenario_json(const std::string& name) {
    std::ifstream in(test::scenario(name));
    return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("a commitment costs its whole term: whole terms for the run, the run's share beside them") {
    const Scenario s = load_scenario(test::scenario("gpt3-175b-128xa3-mega.json"), test::catalog());
    const StepResult r = simulate_step(s.model, s.system, s.plan);
    REQUIRE(r.feasible);
    for (double tokens : {s.token_budget, 400 * s.token_budget}) {  // a few days, then more than a year
        const CostReport c = cost_report(s.model, s.system, r, tokens, test::catalog(), s.region, rel());
        for (const OptionCost& oc : c.options) {
            if (!oc.usd_per_hour) continue;
            INFO(to_string(oc.option) << " at " << tokens << " tokens");
            const double used_h = oc.effective_time_s / 3600;
            if (const auto term = commitment_term_hours(oc.option)) {
                REQUIRE(oc.usd_commitment);
                CHECK(oc.terms == static_cast<int>(std::ceil(used_h / *term)));
                CHECK(*oc.usd_commitment == approx(*oc.usd_per_hour * *term * oc.terms));
                CHECK(*oc.usd_outlay == *oc.usd_commitment);
                CHECK(oc.run_share_of_commitment == approx(used_h / (*term * oc.terms)));
                CHECK(*oc.usd_commitment >= *oc.usd_total_with_failures);
            } else {
                CHECK(!oc.usd_commitment);
                CHECK(*oc.usd_outlay == *oc.usd_total_with_failures);
            }
        }
    }
    CHECK(*commitment_term_hours(PriceOption::commit_1y) == 8760);
    CHECK(*commitment_term_hours(PriceOption::commit_3y) == 3 * 8760);
}

TEST_CASE("search --price 3y: the term cost in the table and the advice, not the run's hours") {
    // The seed on a 3-year commitment: every scale's commitment costs tens of millions, so nothing fits $5M
    // (the run's own hours would have fit).
    auto r = test::run_podsim("search " + test::scenario("seed-1.2t-v4-2048.json") +
                              " --price 3y --budget-usd 5e6 --scales 1,2 --top 2 --no-progress --format json");
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const auto j = nlohmann::json::parse(r.out);
    const auto& best = j["ranked"][0];
    const auto& c = best["cost"]["commitment"];
    REQUIRE(c.is_object());
    CHECK(c["usd"].get<double>() > 5e6);
    CHECK(best["cost"]["usd_total_with_failures"].get<double>() < c["usd"].get<double>());
    CHECK(c["term_hours"] == 26280);
    CHECK(j["fastest_within_budget"].is_null());
    auto t = test::run_podsim("search " + test::scenario("seed-1.2t-v4-2048.json") +
                              " --price 3y --scales 1 --top 2 --no-progress");
    REQUIRE(t.exit_code == 0);
    CHECK(t.out.find("$ term (run)") != std::string::npos);
    CHECK(t.out.find("paid for every hour of its term") != std::string::npos);
}

TEST_CASE("negotiated prices and the buyer's failure rates replace the catalog's, for the scenario's SKU") {
    const std::string dir = test::temp_dir();
    auto j = scenario_json("gpt3-175b-128xa3-mega.json");
    j["pricing"] = {{"region", "us-east4"},
                    {"negotiated", {{"unit", "vm_hour"}, {"on-demand", 50.0}, {"source", "contract X"}}}};
    j["reliability"] = {{"interruptions_per_chip_hour", 1e-4}, {"source", "fleet log"}};
    test::write_file(dir + "/n.json", j.dump());
    const Scenario s = load_scenario(dir + "/n.json", test::catalog());
    const Scenario list = load_scenario(test::scenario("gpt3-175b-128xa3-mega.json"), test::catalog());
    const StepResult r = simulate_step(s.model, s.system, s.plan);
    const CostReport neg = cost_report(s.model, s.system, r, s.token_budget, test::catalog(), s.region,
                                       with_overrides(rel(), s.reliability), &*s.negotiated);
    const CostReport cat = cost_report(list.model, list.system, r, list.token_budget, test::catalog(), list.region, rel());
    CHECK(*find_option(neg, PriceOption::on_demand)->usd_per_hour == approx(50.0 * s.system.nodes));
    // Options the contract does not name keep the catalog's list price.
    CHECK(*find_option(neg, PriceOption::spot)->usd_per_hour == *find_option(cat, PriceOption::spot)->usd_per_hour);
    CHECK(neg.price_source.find("contract X") != std::string::npos);
    // 1e-4 interruptions per chip-hour: the job's MTBF is 1 / (chips x 1e-4) hours.
    CHECK(neg.goodput.mtbf_s == approx(3600 / (s.system.chips * 1e-4)));
    CHECK(neg.goodput.goodput < cat.goodput.goodput);
    // Another machine type in a what-if is priced at its own list price, not the contract's.
    const SystemSpec other = test::catalog().gpu_system("a3-highgpu-8g", 16, "t", "$");
    CHECK(system_usd_per_hour(test::catalog(), other, "us-east4", PriceOption::on_demand, &*s.negotiated) ==
          system_usd_per_hour(test::catalog(), other, "us-east4", PriceOption::on_demand));
    // A TPU price per VM-hour is refused: the unit must be the SKU's.
    auto t = scenario_json("seed-1.2t-v4-2048.json");
    t["pricing"] = {{"negotiated", {{"unit", "vm_hour"}, {"3y", 1.0}, {"source", "x"}}}};
    test::write_file(dir + "/bad.json", t.dump());
    auto bad = test::run_podsim("run " + dir + "/bad.json");
    CHECK(bad.exit_code == 1);
    CHECK(bad.err.find("$.pricing.negotiated.unit") != std::string::npos);
    // An on-premise system has no list price; a negotiated one prices it.
    auto o = scenario_json("megatron-1t-3072xa100.json");
    o["pricing"] = {{"negotiated", {{"unit", "vm_hour"}, {"on-demand", 20.0}, {"source", "our datacenter's TCO"}}}};
    test::write_file(dir + "/onprem.json", o.dump());
    auto run = test::run_podsim("run " + dir + "/onprem.json --format json");
    REQUIRE_MESSAGE(run.exit_code == 0, run.err);
    const auto rj = nlohmann::json::parse(run.out);
    REQUIRE(rj["cost"]["options"][0]["price_option"] == "on-demand");
    CHECK(rj["cost"]["options"][0]["usd_per_hour"].get<double>() == approx(20.0 * 384));
}
