// The podsim command line: help, the shipped scenarios, and bad input (clear error, non-zero exit, no output file).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "tests/helpers.hpp"

using namespace podsim::test;
namespace fs = std::filesystem;

namespace {
std::string good_scenario_text() {
    std::ifstream in(scenario("megatron-1t-3072xa100.json"));
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}
// Writes a variant of a shipped scenario with one edit, runs `podsim run` on it with --out, and returns the result.
CommandResult run_variant(const std::string& name, const std::function<void(podsim::Json&)>& edit) {
    podsim::Json j = podsim::Json::parse(good_scenario_text());
    edit(j);
    const std::string path = temp_dir() + "/" + name + ".json";
    write_file(path, j.dump());
    fs::remove(temp_dir() + "/" + name + ".out");
    return run_podsim("run " + path + " --out " + temp_dir() + "/" + name + ".out");
}
}  // namespace

TEST_CASE("every subcommand answers --help") {
    // The nine commands of cli/main.cpp (kHelp); `podsim --help` lists each of them.
    const char* const commands[] = {"run", "validate", "fit", "calibrate", "search", "sweep", "report", "check", "list"};
    const auto top = run_podsim("--help");
    CHECK(top.exit_code == 0);
    for (const char* cmd : commands) {
        CAPTURE(cmd);
        CHECK(top.out.find(std::string("\n  ") + cmd + " ") != std::string::npos);
        // --help, -h and `podsim help CMD` all print the command's usage on stdout and exit 0, even where the
        // command's required arguments are missing (calibrate, report and fit need more than --help gives them).
        for (const std::string& args : {std::string(cmd) + " --help", std::string(cmd) + " -h", "help " + std::string(cmd)}) {
            CAPTURE(args);
            auto r = run_podsim(args);
            CHECK(r.exit_code == 0);
            CHECK(r.out.rfind(std::string("usage: podsim ") + cmd + " ", 0) == 0);
            CHECK(r.err.empty());
        }
    }
    CHECK(run_podsim("frobnicate").exit_code == 2);
    CHECK(run_podsim("frobnicate --help").exit_code == 2);
}

TEST_CASE("run prints a table or JSON for a shipped scenario") {
    auto text = run_podsim("run " + scenario("seed-1.2t-v4-2048.json"));
    CHECK(text.exit_code == 0);
    CHECK(text.out.find("MFU") != std::string::npos);
    CHECK(text.out.find("on-demand") != std::string::npos);
    auto json = run_podsim("run " + scenario("seed-1.2t-v4-2048.json") + " --format json");
    REQUIRE(json.exit_code == 0);
    auto j = podsim::Json::parse(json.out);
    CHECK(j["feasible"] == true);
    CHECK(j["step_time_s"].get<double>() > 0);
    auto option = [&](const char* key) {
        for (const auto& o : j["cost"]["options"])
            if (o["price_option"] == key) return o;
        return podsim::Json(nullptr);
    };
    CHECK(option("spot")["usd_total"].get<double>() < option("on-demand")["usd_total"].get<double>());
}

TEST_CASE("malformed JSON: one line naming the file, exit 1, no output file") {
    const std::string path = temp_dir() + "/broken.json";
    write_file(path, "{\"schema_version\": 1, \"name\": ");
    fs::remove(temp_dir() + "/broken.out");
    auto r = run_podsim("run " + path + " --out " + temp_dir() + "/broken.out");
    CHECK(r.exit_code == 1);
    CHECK(r.err.find(path + ": $: malformed JSON") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_FALSE(fs::exists(temp_dir() + "/broken.out"));
}

TEST_CASE("unknown machine type, unknown TPU type, missing and misspelt fields name their JSON path") {
    auto r = run_variant("badvm", [](podsim::Json& j) { j["system"]["machine_type"] = "dgx-z900"; });
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("$.system.machine_type: unknown machine type \"dgx-z900\"") != std::string::npos);
    CHECK_FALSE(fs::exists(temp_dir() + "/badvm.out"));

    r = run_variant("badtpu", [](podsim::Json& j) {
        j["system"] = {{"accelerator_type", "v4-3000"}};
    });
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("$.system.accelerator_type: no such slice") != std::string::npos);

    r = run_variant("missing", [](podsim::Json& j) { j["model"].erase("hidden"); });
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("$.model.hidden: missing required field") != std::string::npos);

    r = run_variant("typo", [](podsim::Json& j) { j["parallel"]["tpp"] = 2; });
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("$.parallel.tpp: unknown field") != std::string::npos);

    r = run_variant("wrongtype", [](podsim::Json& j) { j["batch"]["micro_batch"] = "one"; });
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("$.batch.micro_batch: expected an integer") != std::string::npos);
}

TEST_CASE("impossible splits are reported with their reason and exit 3, without an output file") {
    auto r = run_variant("tpheads", [](podsim::Json& j) {
        j["parallel"]["tp"] = 16;  // 160 heads / 16 = 10 is fine, but 16 x 64 x 6 != 3072 chips
    });
    CHECK(r.exit_code == 3);
    CHECK(r.err.find("dp x tp x pp x cp = 6144 but the system has 3072 chips") != std::string::npos);
    CHECK_FALSE(fs::exists(temp_dir() + "/tpheads.out"));

    r = run_variant("heads", [](podsim::Json& j) {
        j["model"]["heads"] = 100, j["model"]["kv_heads"] = 100, j["model"]["head_dim"] = 256;
    });
    CHECK(r.exit_code == 3);
    CHECK(r.err.find("TP=8 does not divide the 100 attention heads") != std::string::npos);
}

TEST_CASE("validate: an unknown chip in a published-run file names the file and JSON path") {
    podsim::Json runs = podsim::Json::parse(std::ifstream(shared("validation/published_runs.json")));
    runs[3]["hardware"]["chip"] = "Z900-SXM";
    const std::string path = temp_dir() + "/runs.json";
    write_file(path, runs.dump());
    auto r = run_podsim("validate " + path);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find(path + ": $[3].hardware.chip: unknown chip \"Z900-SXM\"") != std::string::npos);
    // The other runs are still predicted; the bad one is a row with its reason, left out of the MAPE.
    CHECK(r.out.find(runs[3]["id"].get<std::string>()) != std::string::npos);
    CHECK(r.out.find("errors: 1 run(s) could not be predicted") != std::string::npos);
    CHECK(r.out.find("runs: " + std::to_string(runs.size() - 1) + " ") != std::string::npos);
}

TEST_CASE("validate --format json has the documented keys") {
    auto r = run_podsim("validate " + shared("validation/published_runs.json") + " --format json");
    REQUIRE(r.exit_code == 0);
    auto j = podsim::Json::parse(r.out);
    CHECK(j["runs"].size() >= 40);
    CHECK(j["runs"][0].contains("id"));
    CHECK(j["runs"][0]["predicted_step_time_s"].get<double>() > 0);
    CHECK(j["mape_pct"].get<double>() <= 6);
    CHECK(j["max_error_pct"].get<double>() <= 22);  // see test_validation.cpp
    CHECK(j["failed"].get<int>() == 0);
    CHECK(j["runs"][0]["error"].is_null());
}

TEST_CASE("podsim --version names the version (and the commit where built from a checkout)") {
    auto r = podsim::test::run_podsim("--version");
    CHECK(r.exit_code == 0);
    CHECK(r.out.rfind("podsim 0.", 0) == 0);
    CHECK(r.out.back() == '\n');
}

TEST_CASE("--network and --kernel-profile are refused, with why, where they would be ignored") {
    const std::string seed = scenario("seed-1.2t-v4-2048.json");
    for (const std::string& cmd : {"search " + seed + " --network simgrid", "check " + scenario("claims/seed-1.2t-21-days.json") +
                                      " --kernel-profile p.json", "report " + seed + " --out x --network simgrid"}) {
        CAPTURE(cmd);
        const auto r = run_podsim(cmd);
        CHECK(r.exit_code == 2);
        CHECK(r.err.find("does not apply here") != std::string::npos);
    }
    // Where they change the result they are taken (run: the network backend; validate: the network backend).
    CHECK(run_podsim("run " + seed + " --network simgrid --format json --max-tasks 5000000").exit_code == 0);
}
