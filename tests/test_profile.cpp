// podsim profile (issue #15, part 4): a measured step against the simulated one. The project's own trace (the C++ CPU
// training step written as a Chrome trace) must be attributed to podsim's op names (>= 90% of its time) with a
// per-op comparison; a Kineto-style trace of device kernels is read by its kernels, categorized by their names.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "helpers.hpp"
#include "models/profile_compare.hpp"

using podsim::Json;
using namespace podsim::test;

namespace {

std::string save(const std::string& name, const std::string& text) {
    const std::string path = temp_dir() + "/" + name;
    write_file(path, text);
    return path;
}

// The CPU step's scenario, shrunk so that a step takes a fraction of a second.
std::string tiny_cpu_scenario() {
    std::ifstream in(scenario("cpu-host-gpt.json"));
    Json j = Json::parse(in);
    j["model"]["layers"] = 2, j["model"]["hidden"] = 128, j["model"]["heads"] = 4, j["model"]["ffn_hidden"] = 512;
    j["model"]["vocab"] = 1024, j["model"]["seq_len"] = 64;
    j["batch"]["global_batch_seqs"] = 4, j["batch"]["micro_batch"] = 2;
    return save("tiny-cpu.json", j.dump());
}

}  // namespace

TEST_CASE("profile record + compare: the CPU step's trace is attributed to podsim's ops, op by op") {
    const std::string scen = tiny_cpu_scenario(), trace = temp_dir() + "/cpu-trace.json";
    auto r = run_podsim("profile record " + scen + " --out " + trace + " --steps 2");
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    std::ifstream in(trace);
    const Json t = Json::parse(in);
    const podsim::MeasuredTrace m = podsim::read_chrome_trace(t, trace);
    CHECK(m.steps == 2);  // ProfilerStep#0, #1
    auto c = run_podsim("profile compare " + scen + " " + trace + " --format json");
    REQUIRE_MESSAGE(c.exit_code == 0, c.err);
    const Json j = Json::parse(c.out);
    CHECK(j["attributed_fraction"].get<double>() >= 0.9);
    CHECK(j["trace"]["steps"] == 2);
    // Every layer GEMM of the forward and backward is measured and compared.
    int compared = 0;
    for (const auto& o : j["ops"]) {
        if (o["events"].get<int>() == 0) continue;
        ++compared;
        CHECK(o["measured_s"].get<double>() > 0);
        CHECK(std::isfinite(o["error_pct"].get<double>()));
    }
    CHECK(compared >= 20);
    // Measured per op: the op's events over steps x micro-batches x layers (2 x 2 x 2 here) for qkv: 8 events.
    for (const auto& o : j["ops"])
        if (o["op"] == "qkv") CHECK(o["events"] == 8);
    // The output follows the JSON contract.
    const std::string out = save("profile.json", c.out);
    CHECK(validate_json_outputs({out}) == 0);
    auto text = run_podsim("profile compare " + scen + " " + trace);
    CHECK(text.out.find("in events named as podsim's ops") != std::string::npos);
}

TEST_CASE("profile compare reads a Kineto trace by its device kernels, categorized by name") {
    // Host-side ops (cpu_op) wrap the kernels they launch: only the kernels count, once.
    const std::string trace = save("kineto.json", R"json({"traceEvents": [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#7", "ts": 0, "dur": 10000},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 5000},
        {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16bf16_bf16f32", "ts": 10, "dur": 3000},
        {"ph": "X", "cat": "kernel", "name": "flash_fwd_kernel", "ts": 3100, "dur": 2000},
        {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "ts": 5200, "dur": 1000},
        {"ph": "X", "cat": "kernel", "name": "vectorized_elementwise_kernel", "ts": 6300, "dur": 500},
        {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "ts": 6900, "dur": 100}]})json");
    std::ifstream in(trace);
    const podsim::MeasuredTrace m = podsim::read_chrome_trace(Json::parse(in), trace);
    CHECK(m.format == "kineto (device kernels)");
    CHECK(m.steps == 1);
    REQUIRE(m.events.size() == 5);
    CHECK(m.events[0].category == "matmul");
    CHECK(m.events[1].category == "attention");
    CHECK(m.events[2].category == "communication");
    CHECK(m.events[3].category == "elementwise");
    CHECK(m.events[4].category == "memory");
    // A malformed event is an input error at its JSON path.
    CHECK_THROWS_WITH(podsim::read_chrome_trace(Json::parse(R"({"traceEvents": [{"ph": "X", "name": "k", "dur": 1},
                                                                 {"ph": "X", "name": "k", "dur": -5}]})"), "t.json"),
                      doctest::Contains("$.traceEvents[1].dur"));
    auto bad = run_podsim("profile compare " + scenario("cpu-host-gpt.json") + " " + save("empty.json", "{}"));
    CHECK(bad.exit_code == 1);
    CHECK(bad.err.find("$.traceEvents") != std::string::npos);
}
