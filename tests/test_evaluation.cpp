// Evaluation passes in time to train (issue #12): the forward-only pipeline's closed form on hand-made stages, an
// evaluation pass on a hand-made priced step, the evaluation count in time to train, and the scenario input with
// its bad values.
#include <doctest/doctest.h>

#include <fstream>
#include <functional>
#include <sstream>

#include "models/closed_form.hpp"
#include "models/evaluation.hpp"
#include "models/schedule.hpp"
#include "planner/train_time.hpp"
#include "tests/helpers.hpp"

using namespace podsim;
using podsim::test::approx;

namespace {

std::vector<StageWork> stages(std::initializer_list<double> forwards) {
    std::vector<StageWork> out;
    for (double f : forwards) out.push_back({f, 2 * f});  // the backward is never read
    return out;
}

// A priced step of `pp` identical stages, `vpp` chunks each, every chunk's forward `chunk_fwd_s`; its backward,
// gradient sync, optimizer and parameter gather are large, and must not show in an evaluation.
StepCosts identical_step(int pp, int vpp, double chunk_fwd_s, double p2p_s) {
    StepCosts c;
    c.pp = pp, c.vpp = vpp, c.p2p_s = p2p_s;
    c.schedule = vpp > 1 ? Schedule::interleaved : Schedule::one_f_one_b;
    ChunkCosts ck;
    ck.fwd_s = chunk_fwd_s, ck.bwd_s = 100, ck.grad_sync_s = 100, ck.slowdown_s = 100;
    c.chunks.assign(size_t(pp) * vpp, ck);
    StageCosts st;
    st.flush_sync_s = 100, st.optimizer_s = 100, st.param_gather_s = 100;
    c.stages.assign(pp, st);
    return c;
}

StepResult step_of(double step_s, double tokens_per_step) {
    StepResult r;
    r.step_time_s = step_s;
    r.tokens_per_step = tokens_per_step;
    r.tokens_per_s = tokens_per_step / step_s;
    return r;
}

EvalPass pass_of(double pass_s, long long interval_steps) {
    EvalPass e;
    e.spec.interval_steps = interval_steps;
    e.pass_s = pass_s;
    return e;
}

Json gpt3_scenario() {
    std::ifstream in(test::scenario("gpt3-175b-128xa3-mega.json"));
    std::stringstream ss;
    ss << in.rdbuf();
    return Json::parse(ss.str());
}

test::CommandResult run_json(const std::string& tag, const Json& j) {
    const std::string path = test::temp_dir() + "/eval-" + tag + ".json";
    test::write_file(path, j.dump());
    return test::run_podsim("run " + path + " --format json");
}

}  // namespace

TEST_CASE("a forward-only pipeline of 4 identical stages takes (m + 3) x the stage's forward (+ one hand-off each)") {
    // m micro-batches through P stages: the last leaves after m + P - 1 forward slots (Megatron forward_only).
    CHECK(forward_only_pipeline_s(stages({0.01, 0.01, 0.01, 0.01}), 8, 1, 0) == approx(11 * 0.01));
    CHECK(forward_only_pipeline_s(stages({0.01, 0.01, 0.01, 0.01}), 1, 1, 0) == approx(4 * 0.01));
    // Blocking sends: every slot also carries a hand-off, (m + 3) x (F + t).
    CHECK(forward_only_pipeline_s(stages({0.01, 0.01, 0.01, 0.01}), 8, 1, 0.001) == approx(11 * 0.011));
    // One stage: m forwards and no hand-off.
    CHECK(forward_only_pipeline_s(stages({0.01}), 8, 1, 0.001) == approx(8 * 0.01));
}

TEST_CASE("interleaved forward-only: (m vpp + P - 1) chunk slots of F / vpp + t") {
    // P 4, vpp 2, stage forward 0.01 (chunks of 0.005), m 8, t 0.001: (16 + 3) x 0.006. The fill shrinks by vpp
    // (3 x 0.005 instead of 3 x 0.01), the hand-offs grow by vpp (16 instead of 8 on the busiest stage).
    CHECK(forward_only_pipeline_s(stages({0.01, 0.01, 0.01, 0.01}), 8, 2, 0.001) == approx(19 * 0.006));
    CHECK(forward_only_pipeline_s(stages({0.01, 0.01, 0.01, 0.01}), 8, 2, 0) == approx(19 * 0.005));
}

TEST_CASE("a forward-only pipeline of unequal stages is set by the slowest one, between fill and drain") {
    // Stage 2 takes 0.02: the first micro-batch reaches it at 0.02, it runs 8 x 0.02 back to back, the last one
    // leaves through stage 3 (0.01): 0.19, not (8 + 3) x 0.02 = 0.22.
    CHECK(forward_only_pipeline_s(stages({0.01, 0.01, 0.02, 0.01}), 8, 1, 0) == approx(0.19));
}

TEST_CASE("an evaluation batch is the priced step's forwards only: no backward, sync, optimizer or gather") {
    CHECK(forward_only_s(identical_step(4, 1, 0.01, 0), 8) == approx(11 * 0.01));
    CHECK(forward_only_s(identical_step(4, 1, 0.01, 0.001), 8) == approx(11 * 0.011));
    CHECK(forward_only_s(identical_step(4, 2, 0.005, 0.001), 8) == approx(19 * 0.006));
    // pp 1: the hand-off of a pipeline that has none is not charged.
    CHECK(forward_only_s(identical_step(1, 1, 0.01, 0.5), 8) == approx(8 * 0.01));
}

TEST_CASE("an evaluation pass: ceil(tokens / seq_len) sequences in batches of the global batch, the last partial") {
    // MLPerf GPT-3's evaluation (11,590,004 tokens) at sequence 2048 is 5660 sequences; at the training batch of
    // 2048 over dp 16 x micro-batch 1: two batches of 128 micro-batches per replica and one of 1564 sequences, 98
    // micro-batches (97.75 rounded up). Four identical stages of F: 2 x (128 + 3) F + (98 + 3) F = 363 F.
    ParallelPlan p;
    p.dp = 16, p.pp = 4, p.micro_batch = 1, p.global_batch = 2048;
    EvaluationSpec spec;
    spec.tokens = 11590004, spec.interval_steps = 12;
    const EvalPass e = price_eval_pass(identical_step(4, 1, 0.01, 0), spec, p, 2048);
    CHECK(e.spec.global_batch_seqs == 2048);
    CHECK(e.sequences == 5660);
    CHECK(e.full_batches == 2);
    CHECK(e.last_batch_seqs == 1564);
    CHECK(e.micro_batches == 128);
    CHECK(e.batch_s == approx(131 * 0.01));
    CHECK(e.pass_s == approx(363 * 0.01));
    // A stated evaluation batch: 4096 sequences = 256 micro-batches per replica, one full batch and one of 1564.
    spec.global_batch_seqs = 4096;
    const EvalPass big = price_eval_pass(identical_step(4, 1, 0.01, 0), spec, p, 2048);
    CHECK(big.full_batches == 1);
    CHECK(big.micro_batches == 256);
    CHECK(big.pass_s == approx((259 + 101) * 0.01));
}

TEST_CASE("time to train: an evaluation every K steps adds floor(steps / K) passes; none leaves it unchanged") {
    // A 10 s step of 1e6 tokens; 288e6 tokens are 288 steps (2880 s).
    StepResult r = step_of(10, 1e6);
    const TrainTime none = train_time(288e6, r);
    CHECK(none.total_s == approx(2880));
    CHECK(none.total_s == approx(288e6 / r.tokens_per_s));
    CHECK(none.evaluations == 0);
    CHECK(none.eval_share() == 0);
    CHECK(none.step_incl_eval_s == approx(10));
    // A 5 s pass every 12 steps: 24 passes, 120 s, 4% of 3000 s; a step's share 10 + 5/12 s.
    r.evaluation = pass_of(5, 12);
    const TrainTime t = train_time(288e6, r);
    CHECK(t.train_s == approx(2880));
    CHECK(t.evaluations == 24);
    CHECK(t.eval_s == approx(120));
    CHECK(t.total_s == approx(3000));
    CHECK(t.eval_share() == approx(0.04));
    CHECK(t.step_incl_eval_s == approx(10 + 5.0 / 12));
    // Only completed intervals are evaluated: 287 steps hold 23 intervals, 299 steps 24.
    CHECK(train_time(287e6, r).evaluations == 23);
    CHECK(train_time(299e6, r).evaluations == 24);
    CHECK(train_time(300e6, r).evaluations == 25);
    // An interval longer than the run: no evaluation.
    r.evaluation = pass_of(5, 1000);
    CHECK(train_time(288e6, r).evaluations == 0);
}

TEST_CASE("podsim run: a stated evaluation adds its passes to time to train, goodput's time and the dollars") {
    Json j = gpt3_scenario();
    const auto plain = run_json("none", j);
    REQUIRE(plain.exit_code == 0);
    j["training"]["evaluation"] = {{"tokens", 11590004}, {"interval_steps", 16}};
    const auto with = run_json("every16", j);
    REQUIRE(with.exit_code == 0);
    const Json a = Json::parse(plain.out), b = Json::parse(with.out);
    CHECK(a["evaluation"].is_null());
    CHECK_FALSE(a["cost"].contains("evaluations"));
    REQUIRE(b["evaluation"].is_object());
    // The training step itself is unchanged.
    CHECK(b["step_time_s"].get<double>() == approx(a["step_time_s"].get<double>()));
    const double pass_s = b["evaluation"]["eval_pass_s"].get<double>();
    CHECK(pass_s > 0);
    // 300e9 tokens at 1536 x 2048 tokens per step: 95367.4 steps, 5960 passes of every 16.
    CHECK(b["cost"]["evaluations"].get<long long>() == 5960);
    const double before = a["cost"]["time_to_train_s"].get<double>();
    CHECK(b["cost"]["train_steps_time_s"].get<double>() == approx(before));
    CHECK(b["cost"]["time_to_train_s"].get<double>() == approx(before + 5960 * pass_s));
    CHECK(b["cost"]["eval_share_of_wall_time"].get<double>() == approx(5960 * pass_s / (before + 5960 * pass_s)));
    CHECK(b["evaluation"]["step_time_incl_eval_s"].get<double>() ==
          approx(b["step_time_s"].get<double>() + pass_s / 16));
    const double g = b["cost"]["goodput"]["goodput"].get<double>();
    CHECK(b["cost"]["goodput"]["effective_time_s"].get<double>() ==
          approx(b["cost"]["time_to_train_s"].get<double>() / g));
    // A forward-only pass over 5660 sequences (about 3.7 global batches) costs less than 3.7 training steps: no
    // backward (about twice the forward), no recomputation, no optimizer.
    CHECK(pass_s < 3.7 * b["step_time_s"].get<double>() / 2);
    // The text report says it too.
    const std::string path = test::temp_dir() + "/eval-every16.json";
    const auto text = test::run_podsim("run " + path);
    REQUIRE(text.exit_code == 0);
    CHECK(text.out.find("evaluation pass") != std::string::npos);
    CHECK(text.out.find("of which evaluation") != std::string::npos);
}

TEST_CASE("training.evaluation: bad values are input errors at their JSON path") {
    struct Case {
        const char* tag;
        Json evaluation;
        const char* path;
    };
    const Case cases[] = {
        {"negative-tokens", {{"tokens", -5}, {"interval_steps", 10}}, "$.training.evaluation.tokens"},
        {"zero-tokens", {{"tokens", 0}, {"interval_steps", 10}}, "$.training.evaluation.tokens"},
        {"huge-tokens", {{"tokens", 1e19}, {"interval_steps", 10}}, "$.training.evaluation.tokens"},
        {"interval-0", {{"tokens", 1e6}, {"interval_steps", 0}}, "$.training.evaluation.interval_steps"},
        {"interval-frac", {{"tokens", 1e6}, {"interval_steps", 2.5}}, "$.training.evaluation.interval_steps"},
        {"no-interval", {{"tokens", 1e6}}, "$.training.evaluation.interval_steps"},
        {"gbs-0", {{"tokens", 1e6}, {"interval_steps", 10}, {"global_batch_seqs", 0}},
         "$.training.evaluation.global_batch_seqs"},
        {"unknown", {{"tokens", 1e6}, {"interval_steps", 10}, {"every_tokens", 5}},
         "$.training.evaluation.every_tokens"},
        {"not-object", 12, "$.training.evaluation"},
    };
    for (const auto& c : cases) {
        Json j = gpt3_scenario();
        j["training"]["evaluation"] = c.evaluation;
        const auto r = run_json(c.tag, j);
        CAPTURE(c.tag);
        CHECK(r.exit_code == 1);
        CHECK_MESSAGE(r.err.find(std::string("eval-") + c.tag + ".json: " + c.path) != std::string::npos, r.err);
    }
}
