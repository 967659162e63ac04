// The planner: it finds the engine's best plan, counts what it drops, and its front and advice are consistent.
#include <algorithm>
#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "helpers.hpp"
#include "models/plan_space.hpp"
#include "models/scenario.hpp"
#include "models/step.hpp"
#include "planner/goodput.hpp"
#include "planner/search.hpp"

using namespace podsim;
using podsim::test::approx;

namespace {

Scenario gpt3() { return load_scenario(test::scenario("gpt3-175b-128xa3-mega.json"), test::catalog()); }
const ReliabilityInputs& rel() {
    static const ReliabilityInputs r = load_reliability(default_catalog_dir());
    return r;
}

// A space small enough to brute-force with the engine, still with every kind of choice in it.
PlanSpace small_space() {
    PlanSpace s;
    s.tp = {2, 4, 8};
    s.cp = {1, 2};
    s.pp = {1, 2, 4, 8};
    s.vpp = {1, 2, 3};
    s.zero = {0, 1, 3};
    s.micro_batch = {1, 2};
    s.recompute = {Recompute::selective, Recompute::full};
    s.precision = {Precision::bf16};
    s.layers = 96;
    return s;
}

}  // namespace

TEST_CASE("search returns the plan the engine itself ranks first (brute force over a small space)") {
    const Scenario sc = gpt3();
    SearchOptions o;
    o.space = small_space();
    o.confirm = 10;
    const SearchResult r = search_plans(sc, test::catalog(), rel(), o);
    REQUIRE(!r.ranked.empty());
    double best = 1e30;
    ParallelPlan best_plan;
    size_t feasible = 0;
    for_each_plan(sc.system, sc.plan, *o.space, [&](const ParallelPlan& p) {
        const StepResult e = simulate_step(sc.model, sc.system, p);
        if (!e.feasible) return;
        ++feasible;
        if (e.step_time_s < best) best = e.step_time_s, best_plan = p;
    });
    CAPTURE(describe_plan(best_plan));
    CAPTURE(describe_plan(r.ranked.front().plan));
    CHECK(r.feasible == feasible);
    CHECK(r.ranked.front().step.step_time_s == approx(best).epsilon(1e-9));
}

TEST_CASE("every enumerated plan is either kept or dropped with a counted reason and an example") {
    const Scenario sc = load_scenario(test::scenario("megatron-1t-3072xa100.json"), test::catalog());
    SearchOptions o;
    size_t last_done = 0, last_total = 1, calls = 0;
    o.progress = [&](size_t done, size_t total) { last_done = done, last_total = total, ++calls; };
    const SearchResult r = search_plans(sc, test::catalog(), rel(), o);
    REQUIRE(r.systems.size() == 1);
    CHECK(calls >= 2);  // along the way and at the end
    CHECK(last_done == last_total);
    CHECK(last_total == r.plans);
    const SystemSearch& ss = r.systems[0];
    size_t dropped = 0;
    for (const auto& [why, n] : ss.rejected) {
        dropped += n;
        REQUIRE(ss.example.count(why));
        CHECK(!ss.example.at(why).empty());
    }
    CHECK(ss.plans == ss.feasible + dropped);
    CHECK(ss.rejected.count(Reject::memory));
    CHECK(ss.example.at(Reject::memory).find("GiB") != std::string::npos);
    CHECK(r.plans > 10000);
    // The ranked plans are engine results, in objective order, and all fit.
    for (size_t i = 0; i < r.ranked.size(); ++i) {
        CHECK(r.ranked[i].step.feasible);
        CHECK(r.ranked[i].step.memory.fits);
        if (i) CHECK(r.ranked[i - 1].score <= r.ranked[i].score);
    }
    // The 2021 published plan (fp16, full recomputation, no SP) is not the best the search finds.
    CHECK(r.ranked.front().step.step_time_s < simulate_step(sc.model, sc.system, sc.plan).step_time_s);
}

TEST_CASE("on one system the cost and time objectives agree; the Pareto front trades days for dollars") {
    const Scenario sc = gpt3();
    SearchOptions o;
    o.objective = Objective::time;
    const SearchResult by_time = search_plans(sc, test::catalog(), rel(), o);
    o.objective = Objective::cost;
    const SearchResult by_cost = search_plans(sc, test::catalog(), rel(), o);
    CHECK(describe_plan(by_time.ranked.front().plan) == describe_plan(by_cost.ranked.front().plan));

    o.scales = {0.5, 1, 2};
    o.objective = Objective::time;
    const SearchResult r = search_plans(sc, test::catalog(), rel(), o);
    REQUIRE(r.pareto.size() >= 2);
    auto days = [&](size_t i) { return r.ranked[i].cost.options[0].effective_time_s; };
    auto usd = [&](size_t i) { return *r.ranked[i].cost.options[0].usd_total_with_failures; };
    for (size_t k = 1; k < r.pareto.size(); ++k) {
        CHECK(days(r.pareto[k - 1]) < days(r.pareto[k]));  // slower ...
        CHECK(usd(r.pareto[k - 1]) > usd(r.pareto[k]));    // ... and cheaper, or it would be dominated
    }
    // The fastest plan overall is on the largest system.
    CHECK(r.ranked.front().system.chips == 2 * sc.system.chips);
}

TEST_CASE("cost advice: the cheapest plan within a deadline meets it, the fastest within a budget fits it") {
    const Scenario sc = gpt3();
    SearchOptions o;
    o.scales = {0.5, 1, 2};
    const SearchResult front = search_plans(sc, test::catalog(), rel(), o);
    REQUIRE(front.pareto.size() >= 2);
    // A deadline between the two fastest points of the front: the advice is the second (cheaper, still in time).
    const auto& fast = front.ranked[front.pareto[0]].cost.options[0];
    const auto& next = front.ranked[front.pareto[1]].cost.options[0];
    o.deadline_days = (next.effective_time_s + 1) / 86400;
    o.budget_usd = *fast.usd_total_with_failures - 1;
    const SearchResult r = search_plans(sc, test::catalog(), rel(), o);
    REQUIRE(r.cheapest_within_deadline);
    REQUIRE(r.fastest_within_budget);
    const auto& d = r.ranked[*r.cheapest_within_deadline].cost.options[0];
    const auto& b = r.ranked[*r.fastest_within_budget].cost.options[0];
    CHECK(d.effective_time_s <= *o.deadline_days * 86400);
    CHECK(*d.usd_total_with_failures == approx(*next.usd_total_with_failures));
    CHECK(*b.usd_total_with_failures <= *o.budget_usd);
    CHECK(b.effective_time_s > fast.effective_time_s);
    // An impossible deadline gets a note instead of advice.
    o.deadline_days = 0.01;
    const SearchResult none = search_plans(sc, test::catalog(), rel(), o);
    CHECK(!none.cheapest_within_deadline);
    CHECK(none.advice_note.find("deadline") != std::string::npos);
}

TEST_CASE("podsim search: text, JSON, progress and bad options") {
    const std::string gpt = test::scenario("gpt3-175b-128xa3-mega.json");
    auto ok = test::run_podsim("search " + gpt + " --top 3 --refine 1");
    REQUIRE(ok.exit_code == 0);
    CHECK(ok.out.find("Pareto front") != std::string::npos);
    CHECK(ok.out.find("SimGrid") != std::string::npos);
    auto js = test::run_podsim("search " + gpt + " --top 2 --format json --objective mfu");
    REQUIRE(js.exit_code == 0);
    const auto j = nlohmann::json::parse(js.out);
    CHECK(j["ranked"].size() == 2);
    CHECK(j["ranked"][0]["mfu"].get<double>() >= j["ranked"][1]["mfu"].get<double>());
    CHECK(j["plans_per_s"].get<double>() > 0);

    auto bad = test::run_podsim("search " + gpt + " --objective speed");
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("--objective expects time, cost or mfu") != std::string::npos);
    auto scales = test::run_podsim("search " + gpt + " --scales 1,,2");
    CHECK(scales.exit_code == 2);
    auto onprem = test::run_podsim("search " + test::scenario("megatron-1t-3072xa100.json") + " --objective cost");
    CHECK(onprem.exit_code == 2);
    CHECK(onprem.err.find("dgx-a100") != std::string::npos);
    CHECK(onprem.err.find("the cost objective needs") != std::string::npos);  // library messages name no flag
    CHECK(onprem.out.empty());
}

TEST_CASE("podsim sweep: one row per grid point, CSV and JSON, and axis errors at their sweep path") {
    const std::string dir = test::temp_dir();
    const std::string base = test::scenario("gpt3-175b-128xa3-mega.json");
    test::write_file(dir + "/sweep.json", R"({"schema_version": 1, "name": "t", "scenario": ")" + base + R"(",
        "objective": "time",
        "axes": {"chip_scale": [0.5, 1], "global_batch_seqs": [768, 1536], "price_option": ["on-demand", "spot"]}})");
    auto r = test::run_podsim("sweep " + dir + "/sweep.json --csv " + dir + "/out.csv --json " + dir + "/out.json");
    REQUIRE(r.exit_code == 0);
    std::ifstream in(dir + "/out.json");
    const auto j = nlohmann::json::parse(in);
    REQUIRE(j["points"].size() == 8);
    // More chips at the same batch: faster; spot and on-demand pick the same plan (the objective is time).
    const auto& p = j["points"];
    CHECK(p[4]["best"]["step_time_s"].get<double>() < p[0]["best"]["step_time_s"].get<double>());
    CHECK(p[0]["best"]["plan"] == p[1]["best"]["plan"]);
    CHECK(p[1]["best"]["cost"]["usd_total_with_failures"].get<double>() <
          p[0]["best"]["cost"]["usd_total_with_failures"].get<double>());
    std::ifstream csv(dir + "/out.csv");
    std::string line;
    int lines = 0;
    std::getline(csv, line);
    CHECK(line.rfind("axis_chip_scale,axis_global_batch_seqs,axis_price_option,", 0) == 0);
    while (std::getline(csv, line)) ++lines;
    CHECK(lines == 8);

    test::write_file(dir + "/bad.json", R"({"schema_version": 1, "name": "t", "scenario": ")" + base + R"(",
        "axes": {"system": [{"machine_type": "a3-megagpu-8g", "nodes": 16}, {"machine_type": "a3-megagpu-8g", "nodes": -2}]}})");
    auto bad = test::run_podsim("sweep " + dir + "/bad.json --csv " + dir + "/bad.csv");
    CHECK(bad.exit_code == 1);
    CHECK(bad.err.find("bad.json: $.axes.system[1].nodes") != std::string::npos);
    CHECK(!std::ifstream(dir + "/bad.csv").good());
    test::write_file(dir + "/bad2.json", R"({"schema_version": 1, "name": "t", "scenario": ")" + base + R"(",
        "axes": {"chip_scale": [0.3]}})");
    auto bad2 = test::run_podsim("sweep " + dir + "/bad2.json");
    CHECK(bad2.exit_code == 1);
    CHECK(bad2.err.find("$.axes.chip_scale") != std::string::npos);
}

TEST_CASE("a constrained search: pinned precision and sizes, TP inside one NVLink domain, and why none is left") {
    const Scenario sc = gpt3();
    SearchOptions o;
    o.top = 8, o.confirm = 8;
    o.constraints.precision = {Precision::bf16};
    o.constraints.tp = {4, 8, 16};
    o.constraints.tp_in_nvlink_domain = true;  // A3 Mega: 8 GPUs a domain, so TP 16 goes
    o.constraints.zero = {1};
    const SearchResult r = search_plans(sc, test::catalog(), rel(), o);
    REQUIRE(!r.ranked.empty());
    for (const auto& p : r.ranked) {
        CHECK(p.plan.precision == Precision::bf16);  // no fp8 added behind the user's back
        CHECK((p.plan.tp == 4 || p.plan.tp == 8));
        CHECK(p.plan.zero == 1);
    }
    // Unconstrained, the same search adds fp8 where the chip has it.
    SearchOptions free;
    free.top = 8, free.confirm = 8;
    const SearchResult f = search_plans(sc, test::catalog(), rel(), free);
    CHECK(std::any_of(f.ranked.begin(), f.ranked.end(), [](const RankedPlan& p) { return p.plan.precision == Precision::fp8; }));
    // A value the model does not admit: no plan, and the reason names the flag and what was admitted.
    auto none = test::run_podsim("search " + test::scenario("gpt3-175b-128xa3-mega.json") + " --tp 3 --no-progress");
    CHECK(none.exit_code == 3);
    CHECK(none.out.find("--tp allows none") != std::string::npos);
    auto bad = test::run_podsim("search " + test::scenario("gpt3-175b-128xa3-mega.json") + " --precision fp7");
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("--precision") != std::string::npos);
}

TEST_CASE("sweep --deadline-days / --budget-usd: each point's cheapest plan within the deadline, fastest within budget") {
    const std::string dir = test::temp_dir();
    const std::string base = test::scenario("gpt3-175b-128xa3-mega.json");
    test::write_file(dir + "/sweep.json", R"({"schema_version": 1, "name": "t", "scenario": ")" + base + R"(",
        "objective": "time", "axes": {"chip_scale": [0.5, 1]}})");
    auto r = test::run_podsim("sweep " + dir + "/sweep.json --deadline-days 30 --budget-usd 3e6 --json " + dir +
                              "/out.json --csv " + dir + "/out.csv --no-progress");
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    std::ifstream in(dir + "/out.json");
    const auto j = nlohmann::json::parse(in);
    int within = 0;
    for (const auto& p : j["points"]) {
        if (!p["cheapest_within_deadline"].is_null()) {
            CHECK(p["cheapest_within_deadline"]["cost"]["effective_time_s"].get<double>() <= 30 * 86400.0);
            ++within;
        }
        if (!p["fastest_within_budget"].is_null())
            CHECK(p["fastest_within_budget"]["cost"]["usd_outlay"].get<double>() <= 3e6);
    }
    CHECK(within > 0);
    std::ifstream csv(dir + "/out.csv");
    std::string head;
    std::getline(csv, head);
    CHECK(head.find("deadline_plan,deadline_days,deadline_usd_outlay,budget_plan") != std::string::npos);
}
