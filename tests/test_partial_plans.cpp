// Partial plans (issue 12): fields left out or null are completed by the plan search; the software catalog supplies
// framework behaviours; published records with unpublished settings load and are completed, never guessed.
#include <doctest/doctest.h>

#include <fstream>

#include "helpers.hpp"
#include "models/fast_step.hpp"
#include "models/plan_completion.hpp"
#include "models/published_run.hpp"
#include "models/scenario.hpp"
#include "models/software_stack.hpp"

using namespace podsim;
using namespace podsim::test;

namespace {

Json shared_runs() { return Json::parse(std::ifstream(shared("validation/published_runs.json"))); }

Json run_by_id(const std::string& id) {
    for (const auto& r : shared_runs())
        if (r["id"] == id) return r;
    FAIL("no run " << id);
    return {};
}

std::vector<PublishedRun> load_one(const Json& record, const std::string& name) {
    const std::string path = temp_dir() + "/" + name + ".json";
    write_file(path, Json::array({record}).dump());
    return load_published_runs(path, catalog());
}

}  // namespace

TEST_CASE("software stacks: every catalog entry loads with a source per behaviour; names resolve by earliest, then longest match") {
    const auto stacks = load_software_stacks(default_catalog_dir());
    REQUIRE(stacks.size() >= 9);
    const Json nemo = Json::parse(std::ifstream(std::string(PODSIM_SOURCE_DIR) + "/hardware/catalog/software/nemo.json"));
    for (const auto& s : stacks) {
        CAPTURE(s.id);
        CHECK(s.sources.size() == nemo["behaviours"].size());  // every behaviour the schema has, each with a citation
        for (const auto& [k, src] : s.sources) CHECK(!src.empty());
    }
    auto id = [&](const std::string& text) {
        const SoftwareStack* s = find_stack(stacks, text);
        return s ? s->id : std::string("none");
    };
    CHECK(id("NeMo 24.07 (Megatron-Core)") == "nemo");  // NeMo starts first, though Megatron-Core is longer
    CHECK(id("Megatron-LM (2021)") == "megatron-lm-2021");
    CHECK(id("Megatron-LM (2022)") == "megatron-lm-2022");
    CHECK(id("Megatron-LM") == "megatron-core");
    CHECK(id("Megatron-DeepSpeed") == "megatron-deepspeed");
    CHECK(id("MaxText (JAX/XLA), synthetic data, flash attention") == "maxtext");
    CHECK(id("JAX/T5X + Pathways") == "t5x-paxml");
    CHECK(id("NeMo AutoModel (PyTorch FSDP2, TE + DeepEP)") == "nemo-automodel");
    CHECK(id("TorchTitan on 512 H100") == "torchtitan");
    CHECK(id("nemotron trainer") == "none");  // "nemo" inside a word is not NeMo
    CHECK(id("in-house PyTorch") == "none");
}

TEST_CASE("software stacks: a behaviour without a source is an input error naming the file and path") {
    const std::string err =
        stack_catalog_error("unsourced", [](Json& s) { s["behaviours"]["dp_overlap"].erase("source"); });
    CHECK(err.find("$.behaviours.dp_overlap.source") != std::string::npos);
}

TEST_CASE("a published record without its micro-batch is completed by search, not given one micro-batch per replica") {
    Json r = run_by_id("narayanan21-t1-310b");  // pp 16, 144 micro-batches per replica as published
    r["batch"]["micro_batch"] = nullptr;
    r["batch"]["grad_accum"] = nullptr;
    const auto runs = load_one(r, "no-mb");
    REQUIRE(runs.front().error.empty());
    CHECK(runs.front().free.has(PlanField::micro_batch));
    const PublishedPrediction pred = simulate_published(runs.front(), StepOptions{});
    REQUIRE(pred.step.feasible);
    // The whole local batch as one micro-batch on 16 stages would idle 15/16 of the pipeline.
    CHECK(pred.plan.micro_batches() >= 16);
    CHECK(pred.step.breakdown.bubble_s < 0.2 * pred.step.step_time_s);
    REQUIRE(!pred.chosen.empty());
    CHECK(pred.chosen.front().rfind("batch.micro_batch = ", 0) == 0);
    // Never slower than the published micro-batch: the completion takes the best feasible step time.
    const auto given = load_one(run_by_id("narayanan21-t1-310b"), "given-mb");
    CHECK(pred.step.step_time_s <= simulate_published(given.front(), StepOptions{}).step.step_time_s * 1.0001);
}

TEST_CASE("published records with null parallel degrees load; a ZeRO stage stated only in words is read") {
    Json r = run_by_id("nemo2407-llama3-70b-64xh100");
    r["parallel"]["dp"] = nullptr;
    r["parallel"]["pp"] = nullptr;
    r["parallel"]["vpp"] = nullptr;
    r["parallel"]["zero"] = nullptr;
    r["parallel"]["zero_stage_text"] = "distributed optimizer (ZeRO-1)";
    r["batch"]["micro_batch"] = nullptr;
    r["batch"]["grad_accum"] = nullptr;
    const auto runs = load_one(r, "null-degrees");
    REQUIRE_MESSAGE(runs.front().error.empty(), runs.front().error);
    const PublishedRun& run = runs.front();
    CHECK(run.plan.zero == 1);
    CHECK_FALSE(run.free.has(PlanField::zero));
    CHECK(run.free.has(PlanField::dp));
    CHECK(run.free.has(PlanField::pp));
    const PublishedPrediction pred = simulate_published(run, StepOptions{});
    REQUIRE(pred.step.feasible);
    CHECK(pred.plan.tp == 4);  // given
    CHECK(pred.plan.dp * pred.plan.tp * pred.plan.pp * pred.plan.cp == 64);
    CHECK(pred.escalation.empty());
}

TEST_CASE("a framework the catalog does not know gets the best feasible behaviours, and says so") {
    Json r = run_by_id("nemo2407-llama3-8b-8xh100");
    r["settings"]["framework"] = "In-house PyTorch trainer v7";
    const auto runs = load_one(r, "unknown-stack");
    REQUIRE(runs.front().error.empty());
    CHECK_FALSE(runs.front().stack.in_catalog);
    CHECK(runs.front().plan.attention == AttentionKernel::flash);
    bool said = false;
    for (const auto& a : runs.front().assumptions) said = said || a.find("not in the software catalog") != std::string::npos;
    CHECK(said);
}

TEST_CASE("one unreadable record is an error entry; the others load") {
    Json runs = shared_runs();
    runs[1]["parallel"]["tp"] = "eight";
    const std::string path = temp_dir() + "/one-bad.json";
    write_file(path, runs.dump());
    const auto loaded = load_published_runs(path, catalog());
    REQUIRE(loaded.size() == runs.size());
    CHECK(loaded[0].error.empty());
    CHECK(loaded[1].error.find("$[1].parallel.tp") != std::string::npos);
    CHECK(loaded[1].id == runs[1]["id"].get<std::string>());
    CHECK(loaded[2].error.empty());
}

TEST_CASE("a partial scenario (model, system, batch, token budget) is completed to the best feasible plan") {
    Scenario s = load_scenario(scenario("llama3-70b-partial-16xa3-mega.json"), catalog());
    CHECK(s.free.has(PlanField::tp));
    CHECK(s.free.has(PlanField::micro_batch));
    CHECK(s.stack.id == "megatron-core");
    complete_scenario(s);
    CHECK(s.free.empty());
    CHECK(s.plan.chips() == s.system.chips);
    CHECK(s.plan.precision == Precision::bf16);  // given, so not searched
    CHECK(s.plan_choices.size() >= 9);
    // The completion is the best feasible plan of the space restricted to the free fields: no plan of the same
    // space is faster by the same closed form.
    StepEstimator est(s.model, s.system);
    const StepEstimate chosen = est.estimate(s.plan);
    REQUIRE(chosen.feasible());
    ParallelPlan other = s.plan;
    other.recompute = Recompute::full;
    CHECK(est.estimate(other).step_time_s >= chosen.step_time_s);

    const auto r = run_podsim("run " + scenario("llama3-70b-partial-16xa3-mega.json"));
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("plan completed (fields not given") != std::string::npos);
    CHECK(r.out.find("parallel.tp = ") != std::string::npos);
}

TEST_CASE("a scenario naming an unknown framework is an input error listing the catalog's") {
    Json j = Json::parse(std::ifstream(scenario("llama3-70b-partial-16xa3-mega.json")));
    j["training"]["framework"] = "Colossal Trainer 9";
    const std::string path = temp_dir() + "/unknown-framework.json";
    write_file(path, j.dump());
    const auto r = run_podsim("run " + path);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("$.training.framework") != std::string::npos);
    CHECK(r.err.find("Megatron-DeepSpeed") != std::string::npos);
}

TEST_CASE("a completion whose free fields span more plans than the budget is refused with the figure") {
    Scenario s = load_scenario(scenario("llama3-70b-partial-16xa3-mega.json"), catalog());
    CompletionOptions co;
    co.budget.max_completion_plans = 100;
    const PlanCompletion c = complete_plan(s.model, s.system, PartialPlan{s.plan, s.free}, s.stack, co);
    CHECK_FALSE(c.found);
    CHECK(c.plans_tried == 0);
    CHECK(c.reason.find("over the completion budget of 100") != std::string::npos);
    co.budget.max_completion_plans = 20'000'000;
    CHECK(complete_plan(s.model, s.system, PartialPlan{s.plan, s.free}, s.stack, co).found);
}
