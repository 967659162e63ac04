// Goodput under failures: Young/Daly checkpoint interval and the time lost to checkpoints, failures and restarts.
#include <doctest/doctest.h>

#include <cmath>

#include "models/scenario.hpp"
#include "planner/goodput.hpp"
#include "tests/helpers.hpp"

using namespace podsim;
using podsim::test::approx;

TEST_CASE("the checkpoint interval is Young's sqrt(2 x write time x MTBF), and goodput follows from it") {
    auto s = load_scenario(test::scenario("megatron-1t-3072xa100.json"), test::catalog());
    const StepResult r = simulate_step(s.model, s.system, s.plan);
    ReliabilityInputs rel = load_reliability(default_catalog_dir());
    const Goodput g = goodput_model(s.model, s.system, r, s.token_budget, rel);
    // Llama 3's rate on 3072 GPUs: one interruption every 1 / (3072 x 1.974e-5) hours.
    CHECK(g.mtbf_s == approx(3600 / (3072 * rel.interruptions_per_chip_hour)));
    CHECK(g.checkpoint_bytes == approx(s.model.total_params() * 14));
    CHECK(g.interval_s == approx(std::sqrt(2 * g.checkpoint_write_s * g.mtbf_s)));
    const double waste = g.checkpoint_write_s / g.interval_s +
                         (g.interval_s / 2 + rel.restart_overhead_s + g.checkpoint_write_s) / g.mtbf_s;
    CHECK(g.goodput == approx(1 / (1 + waste)));
    CHECK(g.goodput < 1);
    CHECK(g.effective_time_s == approx(s.token_budget / r.tokens_per_s / g.goodput));
}

TEST_CASE("more chips fail more often; preemptions cut goodput further") {
    auto s = load_scenario(test::scenario("gpt3-175b-128xa3-mega.json"), test::catalog());
    const StepResult r = simulate_step(s.model, s.system, s.plan);
    const ReliabilityInputs rel = load_reliability(default_catalog_dir());
    const Goodput base = goodput_model(s.model, s.system, r, s.token_budget, rel);
    SystemSpec twice = s.system;
    twice.chips *= 2, twice.nodes *= 2;
    CHECK(goodput_model(s.model, twice, r, s.token_budget, rel).mtbf_s == approx(base.mtbf_s / 2));
    const Goodput spot = goodput_model(s.model, s.system, r, s.token_budget, rel, 128 * 0.02);
    CHECK(spot.mtbf_s < base.mtbf_s);
    CHECK(spot.goodput < base.goodput);
}
