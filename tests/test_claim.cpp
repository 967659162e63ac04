// podsim check: claimed outcomes against the simulation of the closest plan.
#include <doctest/doctest.h>

#include "tests/helpers.hpp"

using namespace podsim::test;

TEST_CASE("the seed claim (1.2T on 2048 v4 TensorCores, 21 days, 92% utilization) is not plausible") {
    auto r = run_podsim("check " + scenario("claims/seed-1.2t-21-days.json") + " --format json");
    REQUIRE(r.exit_code == 0);
    auto j = podsim::Json::parse(r.out);
    CHECK(j["plausible"] == false);
    // The simulated plan's hardware utilization is far below 92%: the claim exceeds it by more than the model's error.
    CHECK(j["highest_hfu_plan"]["hfu"].get<double>() < 0.92 / 1.2);
    CHECK(j["tokens_in_claimed_days"].get<double>() > 0);
}

TEST_CASE("a claim at what the plan achieves is plausible; a bad claim file names its path") {
    const std::string dir = temp_dir();
    write_file(dir + "/ok.json", R"({"schema_version": 1, "name": "modest", "scenario": ")" +
                                     scenario("megatron-1t-3072xa100.json") +
                                     R"(", "claim": {"params": 1.0e12, "training_days": 84, "hardware_utilization": 0.5}})");
    // The scenario path is joined to the claim's folder; an absolute path stays absolute.
    auto r = run_podsim("check " + dir + "/ok.json --format json");
    REQUIRE(r.exit_code == 0);
    CHECK(podsim::Json::parse(r.out)["plausible"] == true);
    write_file(dir + "/bad.json", R"({"schema_version": 1, "name": "x", "scenario": "s.json",
        "claim": {"hardware_utilization": 1.5}})");
    auto b = run_podsim("check " + dir + "/bad.json");
    CHECK(b.exit_code == 1);
    CHECK(b.err.find("$.claim.hardware_utilization: expected a number from 0.01 to 1") != std::string::npos);
}

TEST_CASE("check answers, not only verdicts: what meets the claimed days and its cost; cost and tokens judged") {
    auto r = run_podsim("check " + scenario("claims/seed-1.2t-21-days.json") + " --format json");
    REQUIRE(r.exit_code == 0);
    auto j = podsim::Json::parse(r.out);
    // The seed's 300B tokens in 21 days: a larger system does it, and check names it with its cost.
    REQUIRE(j["meets_claim"].is_object());
    CHECK(j["meets_claim"]["days_with_failures"].get<double>() <= 21);
    CHECK(j["meets_claim"]["system"]["chips"].get<int>() > 1024);
    CHECK(j["meets_claim"]["cost"]["price_option"] == "on-demand");
    CHECK(j["meets_claim"]["cost"]["usd_outlay"].get<double>() > 0);
    // 21 days on the claim's own 1,024 chips trains a fraction of the budget: a finding that fails the claim.
    bool tokens_finding = false;
    for (const auto& f : j["findings"]) tokens_finding = tokens_finding || f.get<std::string>().find("budget is") != std::string::npos;
    CHECK(tokens_finding);
    CHECK(j["notes"][0].get<std::string>().find("duty cycle") != std::string::npos);
    // A claimed cost far below what any plan costs is not plausible, and says the cheapest.
    const std::string dir = temp_dir();
    write_file(dir + "/cheap.json", R"({"schema_version": 1, "name": "cheap", "scenario": ")" +
                                        scenario("gpt3-175b-128xa3-mega.json") +
                                        R"(", "claim": {"params": 1.75e11, "cost_usd": 1000}})");
    auto c = run_podsim("check " + dir + "/cheap.json --format json");
    REQUIRE(c.exit_code == 0);
    const auto cj = podsim::Json::parse(c.out);
    CHECK(cj["plausible"] == false);
    bool cost_finding = false;
    for (const auto& f : cj["findings"]) cost_finding = cost_finding || f.get<std::string>().find("cost: claimed") != std::string::npos;
    CHECK(cost_finding);
}
