// The JSON contract (issue #14 item 5): every JSON output of `run`, `search`, `sweep`, `check` and `validate`
// validates against the one documented schema, docs/output.schema.json, with the jsonschema package (Debian's
// python3-jsonschema, installed by scripts/setup.sh), the validator a consumer of the contract would use. The schema
// lists every key of every object and allows no others, so an undocumented key, a renamed one or a wrong type fails
// here. Golden tier: it runs the commands on shipped inputs and validates the golden files as well.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "hardware/json_reader.hpp"
#include "helpers.hpp"

namespace fs = std::filesystem;
using podsim::Json;
using namespace podsim::test;

namespace {

fs::path root() { return fs::path(PODSIM_SCENARIO_DIR).lexically_normal().parent_path(); }

int validate(const std::vector<std::string>& files) { return validate_json_outputs(files); }

std::string save(const std::string& name, const std::string& text) {
    const std::string path = temp_dir() + "/" + name;
    write_file(path, text);
    return path;
}

Json load(const std::string& path) {
    std::ifstream in(path);
    return Json::parse(in);
}

}  // namespace

TEST_CASE("every command's JSON output validates against docs/output.schema.json") {
    std::vector<std::string> outputs;
    auto run = [&](const std::string& name, const std::string& args) {
        const auto r = run_podsim(args);
        INFO(args << "\n" << r.err);
        REQUIRE(r.exit_code == 0);
        outputs.push_back(save(name, r.out));
    };
    run("run-seed.json", "run --format json");
    run("run-eval.json", "run " + scenario("mlperf-gpt3-175b-512xh100.json") + " --format json");  // evaluation block
    // An infeasible plan: GPT-3 175B's weights, gradients and Adam state on 16 GPUs without sharding (~175 GB a GPU).
    Json infeasible = load(scenario("gpt3-175b-128xa3-mega.json"));
    infeasible["system"]["nodes"] = 2;
    infeasible["parallel"] = {{"dp", 1}, {"tp", 8}, {"pp", 2}, {"vpp", 1}, {"sp", true}, {"zero", 0}, {"cp", 1}};
    infeasible["training"]["recompute"] = "none";
    const std::string bad_plan = save("infeasible.json", infeasible.dump());
    const auto r = run_podsim("run " + bad_plan + " --format json");
    REQUIRE(r.exit_code != 0);  // an infeasible plan is a result with reasons, and a non-zero exit
    outputs.push_back(save("run-infeasible.json", r.out));
    CHECK(load(outputs.back())["feasible"] == false);
    run("search.json", "search " + scenario("seed-1.2t-v4-2048.json") + " --format json --top 3 --scales 1,2 "
                       "--deadline-days 60 --budget-usd 200e6");
    run("search-3y.json", "search " + scenario("gpt3-175b-128xa3-mega.json") + " --format json --top 2 --price 3y");
    const std::string sweep_out = temp_dir() + "/sweep-out.json";
    run("sweep.log", "sweep " + (root() / "scenarios" / "sweeps" / "gpt3-175b-what-if.json").string() + " --json " +
                         sweep_out + " --no-progress --csv " + temp_dir() + "/sweep.csv");
    outputs.back() = sweep_out;
    run("check.json", "check " + (root() / "scenarios" / "claims" / "seed-1.2t-21-days.json").string() + " --format json");
    // validate, with one record that cannot be read: its row has the same keys, its prediction null.
    Json runs = load((root() / "scenarios" / "validation" / "moe_runs.json").string());
    runs[1]["parallel"]["tp"] = "eight";
    const std::string runs_file = save("runs.json", runs.dump());
    const auto vr = run_podsim("validate " + runs_file + " --format json");
    CHECK(vr.exit_code == 1);  // every run is reported; the exit status says one could not be predicted
    outputs.push_back(save("validate.json", vr.out));
    const Json v = load(outputs.back());
    CHECK(v["failed"] == 1);
    CHECK(v["runs"][1]["predicted_step_time_s"].is_null());
    CHECK(v["runs"][1]["error"].get<std::string>().find("parallel.tp") != std::string::npos);
    CHECK(validate(outputs) == 0);

    // One key per concept: the same concept has the same key and shape in every output.
    const Json run_j = load(outputs[0]), search_j = load(outputs[3]), sweep_j = load(sweep_out);
    for (const char* k : {"compute", "exposed_communication", "pipeline_bubble", "optimizer"}) {
        CHECK(run_j["breakdown_s"].contains(k));
        CHECK(search_j["ranked"][0]["breakdown_s"].contains(k));
    }
    CHECK(run_j["plan"].size() == search_j["ranked"][0]["plan"].size());
    CHECK(run_j["system"].size() == sweep_j["points"][0]["system"].size());
    CHECK(search_j["price_option"] == "on-demand");
    CHECK(load(outputs[4])["price_option"] == "3y");
    CHECK(load(outputs[4])["ranked"][0]["cost"]["commitment"]["usd"].get<double>() > 0);  // the whole term's cost
}

TEST_CASE("the schema rejects an undocumented key, a missing key and a wrong type") {
    const auto r = run_podsim("run --format json");
    REQUIRE(r.exit_code == 0);
    const Json good = Json::parse(r.out);
    Json extra = good, missing = good, wrong = good;
    extra["breakdown_s"]["exposed_comm"] = 1.0;  // the old, second spelling of exposed_communication
    missing.erase("step_time_s");
    wrong["plan"]["tp"] = "8";
    CHECK(validate({save("good.json", good.dump())}) == 0);
    CHECK(validate({save("extra.json", extra.dump())}) != 0);
    CHECK(validate({save("missing.json", missing.dump())}) != 0);
    CHECK(validate({save("wrong.json", wrong.dump())}) != 0);
}

TEST_CASE("the golden outputs validate against the schema") {
    std::vector<std::string> files;
    for (const char* kind : {"run", "sweep", "check", "validate"})
        for (const auto& e : fs::directory_iterator(root() / "tests" / "golden" / kind)) files.push_back(e.path().string());
    REQUIRE(files.size() >= 15);
    CHECK(validate(files) == 0);
}
