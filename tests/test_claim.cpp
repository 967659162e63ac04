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
    CHECK(j["simulated_hfu"].get<double>() < 0.92 / 1.2);
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
