// The slowest rank (models/straggler.hpp): the expected maximum of n normal draws against the tables, and a
// cluster's stated spread of rank speeds slowing every kernel of the priced step, not its collectives.
#include <doctest/doctest.h>

#include <cmath>

#include "models/scenario.hpp"
#include "models/step_costs.hpp"
#include "models/straggler.hpp"
#include "tests/helpers.hpp"

using namespace podsim;
using podsim::test::approx;

TEST_CASE("the expected maximum of n standard normal draws matches the order-statistics tables") {
    CHECK(expected_max_std_normal(1) == 0);
    CHECK(expected_max_std_normal(2) == approx(1 / std::sqrt(M_PI)).epsilon(1e-5));  // E|Z| / 2 x 2
    // Teichroew (1956) / Harter (1961) tables of normal order statistics: n = 10, 100, 1000.
    CHECK(expected_max_std_normal(10) == approx(1.538753).epsilon(1e-5));
    CHECK(expected_max_std_normal(100) == approx(2.507594).epsilon(1e-5));
    CHECK(expected_max_std_normal(1000) == approx(3.241436).epsilon(1e-5));
    // Beyond the tables, against a 200,000-step integration of the same formula: the README's figures.
    CHECK(expected_max_std_normal(10752) == approx(3.869411).epsilon(1e-5));
    CHECK(expected_max_std_normal(1LL << 22) == approx(5.139788).epsilon(1e-5));
    double last = 0;
    for (long long n = 2; n <= (1LL << 22); n *= 4) {
        const double z = expected_max_std_normal(n);
        CHECK(z > last);  // more ranks, a slower slowest one
        last = z;
    }
    CHECK(slowest_rank_factor(0, 1 << 20) == 1);
    CHECK(slowest_rank_factor(0.02, 1000) == approx(1 + 0.02 * 3.241436).epsilon(1e-6));
}

TEST_CASE("a stated spread of rank speeds slows every kernel by the slowest rank's factor, not the collectives; a "
          "bad spread names its path") {
    Json j = load_json_file(test::scenario("gpt3-175b-128xa3-mega.json"));
    const Scenario even = scenario_from_json(j, "s.json", test::catalog());
    j["system"]["rank_speed_cv"] = 0.03;
    const Scenario spread = scenario_from_json(j, "s.json", test::catalog());
    REQUIRE(spread.system.rank_speed_cv == 0.03);
    const CollectiveTimer timer(even.system, NetworkBackend::analytical);
    const StepCosts a = price_step(even.model, even.system, even.plan, timer);
    const StepCosts b = price_step(spread.model, spread.system, spread.plan, timer);
    const double factor = 1 + 0.03 * expected_max_std_normal(even.plan.chips());
    REQUIRE(a.layer_forward.size() == b.layer_forward.size());
    int kernels = 0, collectives = 0;
    for (size_t i = 0; i < a.layer_forward.size(); ++i) {
        const OpTiming &x = a.layer_forward[i], &y = b.layer_forward[i];
        if (x.time_s <= 0) continue;
        if (x.kind == OpKind::collective) {
            CHECK(y.time_s == approx(x.time_s));
            ++collectives;
        } else {
            CHECK(y.time_s == approx(x.time_s * factor));
            ++kernels;
        }
    }
    CHECK(kernels > 5);
    CHECK(collectives > 0);
    // The optimizer step is kernels too; the priced chunk's compute is slower as a whole.
    CHECK(b.stages[0].optimizer_s == approx(a.stages[0].optimizer_s * factor));
    CHECK(b.chunk(0, 0).fwd_s > a.chunk(0, 0).fwd_s);
    // A system podsim re-sizes (search --scales, sweeps, check) keeps the spread.
    const auto bigger = test::catalog().resized(spread.system, 2 * spread.system.chips);
    REQUIRE(bigger);
    CHECK(bigger->rank_speed_cv == 0.03);
    CHECK(b.efficiency_source.find("slowest of " + std::to_string(even.plan.chips()) + " ranks") != std::string::npos);
    CHECK(a.efficiency_source.find("slowest of") == std::string::npos);

    j["system"]["rank_speed_cv"] = 0.7;
    try {
        (void)scenario_from_json(j, "s.json", test::catalog());
        FAIL("a spread of 0.7 loaded");
    } catch (const InputError& e) {
        CHECK(std::string(e.what()).find("$.system.rank_speed_cv") != std::string::npos);
    }
}
