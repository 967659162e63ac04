// One training step end to end: pipeline schedules against their closed-form bubbles, infeasible plans with reasons.
#include <doctest/doctest.h>

#include "models/scenario.hpp"
#include "models/step.hpp"
#include "tests/helpers.hpp"

using namespace podsim;
using podsim::test::approx;

namespace {

ModelSpec tiny_vocab_model() {
    ModelSpec m;
    m.name = "uniform";
    m.layers = 16, m.hidden = 4096, m.ffn_hidden = 16384, m.heads = 32, m.kv_heads = 32, m.head_dim = 128;
    m.vocab = 128, m.seq_len = 2048;  // negligible embedding/logits: every stage does the same work
    m.position = Position::rope, m.dropout = false;
    return m;
}

double bubble_fraction(Schedule s, int v) {
    const SystemSpec sys = test::catalog().gpu_system("dgx-h100", 1, "t", "$");
    ParallelPlan p;
    p.tp = 2, p.pp = 4, p.dp = 1, p.vpp = v, p.schedule = s;
    p.micro_batch = 1, p.global_batch = 8;
    StepResult r = simulate_step(tiny_vocab_model(), sys, p);
    REQUIRE(r.feasible);
    return r.breakdown.bubble_s / r.step_time_s;
}

}  // namespace

// The closed forms assume identical stages and free hand-offs; the first and last stages also hold the (tiny)
// embedding and logits, and each hand-off costs a p2p transfer, so 5% of slack.
TEST_CASE("a 4-stage 1F1B pipeline with 8 micro-batches idles (p-1)/(m+p-1) of the step") {
    CHECK(bubble_fraction(Schedule::one_f_one_b, 1) == approx(3.0 / 11).epsilon(0.05));
}

TEST_CASE("GPipe has the same bubble as 1F1B (it differs in memory, not time)") {
    CHECK(bubble_fraction(Schedule::gpipe, 1) == approx(3.0 / 11).epsilon(0.05));
}

TEST_CASE("interleaving v chunks per stage divides the bubble by v (Narayanan et al. 2021, sec. 2.2.2)") {
    const double b = (3.0 / 2) / (8 + 3.0 / 2);
    CHECK(bubble_fraction(Schedule::interleaved, 2) == approx(b).epsilon(0.05));
}

TEST_CASE("impossible plans are results with reasons, not crashes") {
    const SystemSpec sys = test::catalog().gpu_system("dgx-a100", 2, "t", "$");
    ModelSpec m = tiny_vocab_model();
    m.heads = 30, m.kv_heads = 30, m.head_dim = 128;
    ParallelPlan p;
    p.tp = 8, p.dp = 2, p.micro_batch = 1, p.global_batch = 2;
    auto r = simulate_step(m, sys, p);
    CHECK_FALSE(r.feasible);
    REQUIRE(!r.infeasible.empty());
    CHECK(r.infeasible[0].find("does not divide the 30 attention heads") != std::string::npos);

    p.dp = 4;  // 4 x 8 = 32 chips on a 16-GPU system
    m = tiny_vocab_model();
    r = simulate_step(m, sys, p);
    CHECK_FALSE(r.feasible);
    CHECK(r.infeasible[0].find("but the system has 16 chips") != std::string::npos);
}

TEST_CASE("a plan over HBM is reported as not fitting, with the numbers") {
    const SystemSpec sys = test::catalog().gpu_system("dgx-a100", 1, "t", "$");
    ModelSpec m = tiny_vocab_model();
    m.layers = 96, m.hidden = 12288, m.ffn_hidden = 49152, m.heads = 96;  // 175B on 8 GPUs, no sharding
    ParallelPlan p;
    p.tp = 8, p.micro_batch = 1, p.global_batch = 1;
    auto r = simulate_step(m, sys, p);
    CHECK_FALSE(r.feasible);
    CHECK_FALSE(r.memory.fits);
    CHECK(r.memory.total_bytes > r.memory.hbm_bytes);
    CHECK(r.infeasible.back().find("GiB per device (weights ") != std::string::npos);
    CHECK(r.infeasible.back().find("but A100 SXM4 80GB has") != std::string::npos);
}

TEST_CASE("doubling data parallelism at fixed per-replica work keeps the step time and doubles throughput") {
    auto s = load_scenario(test::scenario("gpt3-175b-128xa3-mega.json"), test::catalog());
    auto r1 = simulate_step(s.model, s.system, s.plan);
    auto sys2 = test::catalog().gpu_system("a3-megagpu-8g", 256, "t", "$");
    auto p2 = s.plan;
    p2.dp *= 2, p2.global_batch *= 2;
    auto r2 = simulate_step(s.model, sys2, p2);
    REQUIRE(r1.feasible);
    REQUIRE(r2.feasible);
    CHECK(r2.step_time_s == approx(r1.step_time_s).epsilon(0.02));
    CHECK(r2.tokens_per_s == approx(2 * r1.tokens_per_s).epsilon(0.02));
}

TEST_CASE("MFU and HFU follow from the step time; full recomputation raises HFU over MFU by about 4/3") {
    auto s = load_scenario(test::scenario("megatron-1t-3072xa100.json"), test::catalog());
    auto r = simulate_step(s.model, s.system, s.plan);
    REQUIRE(r.feasible);
    CHECK(r.mfu == approx(r.model_flops_per_step / (3072 * 312e12 * r.step_time_s)));
    CHECK(r.hfu / r.mfu == approx(4.0 / 3).epsilon(0.05));
    const auto& b = r.breakdown;
    CHECK(b.compute_s + b.exposed_comm_s + b.bubble_s + b.optimizer_s == approx(r.step_time_s).epsilon(0.01));
    // 64 stages, 512 micro-batches: at least the 1F1B bubble of equal stages, 63/575 of the step; more, because the
    // last stage also computes the logits and the others wait for it.
    CHECK(b.bubble_s / r.step_time_s > 63.0 / 575);
    CHECK(b.bubble_s / r.step_time_s < 2 * 63.0 / 575);
}
