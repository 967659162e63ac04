// Accuracy against published training runs (shared/validation), the bar of issue #2, and the shipped profiles.
#include <doctest/doctest.h>

#include <cmath>

#include "models/published_run.hpp"
#include "models/scenario.hpp"
#include "tests/helpers.hpp"

using namespace podsim;
using podsim::test::approx;

// Regression guards, not the goal (issue 12: MAPE <= 4%, worst <= 12%). Worst: the MaxText v5p full-rematerialization
// runs (+20-22%) since the memory model stopped escalating the minimal-remat ones to full recomputation and the v5p
// GEMM efficiency was refitted without that crutch.
TEST_CASE("published step times: MAPE <= 6% and worst error <= 22% over all runs") {
    const auto runs = load_published_runs(test::shared("validation/published_runs.json"), test::catalog());
    REQUIRE(runs.size() >= 40);
    double sum = 0, worst = 0;
    for (const auto& run : runs) {
        REQUIRE_MESSAGE(run.error.empty(), run.error);
        const auto pred = simulate_published(run, StepOptions{});
        const double err = 100 * std::fabs(pred.step.step_time_s / run.published_step_time_s - 1);
        CHECK_MESSAGE(err <= 22, run.id << " off by " << err << "%");
        sum += err;
        worst = std::max(worst, err);
    }
    const double mape = sum / runs.size();
    MESSAGE("validation MAPE " << mape << "%, worst " << worst << "%");
    CHECK(mape <= 6);
}

TEST_CASE("the shipped GEMM-efficiency profiles are what podsim fit produces today") {
    // A profile fitted before a model change would silently carry the old model's errors: refit if this fails.
    for (const auto& chip : test::catalog().chips()) {
        for (const auto& prof : chip.profiles) {
            if (prof.fitted_chip != chip.id) continue;  // borrowed from the same silicon: checked with its owner
            // The runs files the profile names (relative to the source root: ../shared/... or scenarios/...).
            const Json fit = Json::parse(test::slurp(prof.file)).at("fit");
            std::string files;
            for (const auto& f : fit.at("runs_files")) {
                const std::string rel = f.get<std::string>();
                files += " " + (rel.rfind("../shared/", 0) == 0 ? test::shared(rel.substr(10))
                                                                 : std::string(PODSIM_SOURCE_DIR) + "/" + rel);
            }
            auto r = test::run_podsim("fit" + files + " --chip " + chip.id + " --precision " + prof.precision);
            REQUIRE(r.exit_code == 0);
            char expect[64];
            std::snprintf(expect, sizeof expect, "GEMM efficiency %.3f of peak", prof.matmul_peak_fraction);
            CHECK_MESSAGE(r.out.find(expect) != std::string::npos, chip.id << " " << prof.precision << ": " << r.out);
        }
    }
}

TEST_CASE("every shipped scenario is a feasible plan with sane outputs") {
    for (const char* name : {"seed-1.2t-v4-2048.json", "gpt3-175b-128xa3-mega.json", "llama3-405b-v5p.json",
                             "megatron-1t-3072xa100.json"}) {
        auto s = load_scenario(test::scenario(name), test::catalog());
        auto r = simulate_step(s.model, s.system, s.plan);
        CHECK_MESSAGE(r.feasible, name);
        CHECK(r.step_time_s > 0);
        CHECK(r.mfu > 0.2);
        CHECK(r.mfu < 0.9);
        CHECK(r.memory.fits);
    }
}

TEST_CASE("Megatron 1T on 3072 A100s: 450B tokens take about 84 days (Narayanan et al. 2021, sec. 5.1)") {
    auto s = load_scenario(test::scenario("megatron-1t-3072xa100.json"), test::catalog());
    auto r = simulate_step(s.model, s.system, s.plan);
    const double days = s.token_budget / r.tokens_per_s / 86400;
    CHECK(days == approx(84).epsilon(0.15));
}
