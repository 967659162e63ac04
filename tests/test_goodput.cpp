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
    // Llama 3's rates on 3072 GPUs in 384 hosts with one backend NIC per GPU (the DGX A100's 8 x 200G): chips,
    // links and software per GPU, hosts per host.
    auto rate = [&](FailureComponent c) { return rel.failures[static_cast<int>(c)].per_unit_hour; };
    const double per_hour = 3072 * (rate(FailureComponent::chip) + rate(FailureComponent::link) +
                                    rate(FailureComponent::software)) +
                            384 * rate(FailureComponent::host);
    CHECK(g.mtbf_s == approx(3600 / per_hour));
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

TEST_CASE("failure rates per component add up to Llama 3's 419 interruptions on its own cluster") {
    const ReliabilityInputs rel = load_reliability(default_catalog_dir());
    // 16,384 H100 in 2,048 hosts of 8 GPUs and 8 backend NICs: the rates must give back 419 in 54 days.
    auto s = load_scenario(test::scenario("gpt3-175b-128xa3-mega.json"), test::catalog());
    SystemSpec llama = s.system;
    llama.nodes = 2048, llama.chips = 16384;
    REQUIRE(llama.node.gpu_nics_per_node == 8);
    CHECK(job_failures_per_hour(llama, rel) * 54 * 24 == doctest::Approx(419).epsilon(1e-3));
    for (const JobFailures& f : job_failures(llama, rel)) {
        const std::string component = to_string(f.component);
        CAPTURE(component);
        CHECK(!f.source.empty());
        CHECK(f.per_hour == doctest::Approx(f.units * f.per_unit_hour));
    }
    // A scenario's own figure replaces one component and names its source; a flat rate replaces them all.
    ReliabilityOverrides o;
    o.host_per_hour = 1e-3, o.source = "our fleet";
    const ReliabilityInputs mine = with_overrides(rel, o);
    const auto parts = job_failures(llama, mine);
    CHECK(parts[1].per_hour == approx(2048 * 1e-3));
    CHECK(parts[1].source.find("our fleet") != std::string::npos);
    CHECK(parts[0].per_hour == approx(job_failures(llama, rel)[0].per_hour));
    ReliabilityOverrides flat;
    flat.interruptions_per_chip_hour = 1e-5, flat.source = "fleet log";
    CHECK(job_failures_per_hour(llama, with_overrides(rel, flat)) == approx(16384 * 1e-5));
}

TEST_CASE("recovery on TPU: spares are OCS cubes or whole slices, and elastic needs a slice to continue on") {
    const ReliabilityInputs rel = load_reliability(default_catalog_dir());
    auto s = load_scenario(test::scenario("seed-1.2t-v4-2048.json"), test::catalog());
    const StepResult r = simulate_step(s.model, s.system, s.plan);
    REQUIRE(r.feasible);
    const Goodput g = goodput_model(s.model, s.system, r, s.token_budget, rel);
    auto by_id = [](const std::vector<RecoveryOption>& v, const std::string& id) {
        for (const auto& o : v)
            if (o.id == id) return o;
        FAIL("no " << id);
        return RecoveryOption{};
    };
    // One v4-2048 slice (1,024 chips, 256 hosts of 4): 1% of its hosts is 2.56, so one cube of 16 hosts; a chip failure
    // breaks the slice's torus, so there is nothing to continue on elastically.
    const auto one = recovery_options(g, s.system, r.dp, 1e6, rel);
    CHECK(by_id(one, "spares").spare_hosts == 16);
    CHECK(by_id(one, "spares").spare_unit.find("cube") != std::string::npos);
    CHECK_FALSE(by_id(one, "elastic").applicable);
    // Four slices: a hardware failure takes one slice (a quarter of the replicas) until it is back.
    SystemSpec four = s.system;
    four.slices = 4, four.chips *= 4;
    const int dp4 = r.dp * 4;
    const Goodput g4 = goodput_model(s.model, four, r, s.token_budget, rel);
    const auto many = recovery_options(g4, four, dp4, 1e6, rel);
    const RecoveryOption el = by_id(many, "elastic"), im = by_id(many, "in-memory");
    REQUIRE(el.applicable);
    const auto parts = job_failures(four, rel);
    double all = 0, hardware = 0;
    for (const auto& f : parts) {
        all += f.per_hour;
        if (f.component != FailureComponent::software) hardware += f.per_hour;
    }
    CHECK(el.downtime_per_failure_s == approx(im.downtime_per_failure_s + rel.replacement_wait_s / 4 * hardware / all));
    // A TPU without optical switches (v5e) replaces a whole slice: 1% of two slices' hosts is one slice.
    const SystemSpec v5e = test::catalog().tpu_system("v5litepod-256", 2, "test", "$.system");
    const Goodput ge = goodput_model(s.model, v5e, r, s.token_budget, rel);
    const RecoveryOption sp = by_id(recovery_options(ge, v5e, 16, 1e6, rel), "spares");
    CHECK(sp.spare_hosts == v5e.hosts() / 2);
    CHECK(sp.spare_unit.find("v5litepod-256 slice") != std::string::npos);
}
