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

namespace {

Json read_json(const std::string& path) {
    std::ifstream in(path);
    return Json::parse(in);
}

const Json* measurement(const Json& profile, const std::string& op, const std::string& pass) {
    for (const auto& m : profile["measurements"])
        if (m["op"] == op && m["pass"] == pass) return &m;
    return nullptr;
}

std::string tiny_cpu_scenario_seq(int seq_len) {
    Json j = read_json(tiny_cpu_scenario());
    j["model"]["seq_len"] = seq_len;
    return save("tiny-cpu-seq" + std::to_string(seq_len) + ".json", j.dump());
}

}  // namespace

TEST_CASE("calibrate --from-trace: the CPU step's trace becomes a kernel profile that reproduces it op by op") {
    const std::string scen = tiny_cpu_scenario(), trace = temp_dir() + "/cpu-trace-calib.json",
                      prof = temp_dir() + "/from-trace.json";
    auto r = run_podsim("profile record " + scen + " --out " + trace + " --steps 2");
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    auto c = run_podsim("calibrate " + scen + " --from-trace " + trace + " --out " + prof);
    REQUIRE_MESSAGE(c.exit_code == 0, c.err);
    const Json p = read_json(prof);
    CHECK(p["kind"] == "kernel-calibration");
    CHECK(p["chip"] == "host-cpu");
    // qkv: the trace's qkv events over steps x micro-batches x layers = 2 x 2 x 2 occurrences, summed here from the
    // trace itself.
    double qkv_us = 0;
    int qkv_events = 0;
    const Json recorded = read_json(trace);
    for (const auto& e : recorded["traceEvents"])
        if (e.value("name", "") == "qkv") qkv_us += e["dur"].get<double>(), ++qkv_events;
    const Json* q = measurement(p, "qkv", "forward");
    REQUIRE(q != nullptr);
    CHECK(qkv_events == 8);
    CHECK((*q)["occurrences"].get<double>() == 8);
    CHECK((*q)["mean_s"].get<double>() == doctest::Approx(qkv_us * 1e-6 / 8).epsilon(1e-9));
    CHECK((*q)["min_s"].get<double>() <= (*q)["mean_s"].get<double>());
    CHECK((*q)["max_s"].get<double>() >= (*q)["mean_s"].get<double>());
    // Per-head attention events (heads of them per occurrence) are one op each; the optimizer one a step.
    CHECK(measurement(p, "core.qk", "forward") != nullptr);
    CHECK(measurement(p, "mlp.down.wgrad", "backward") != nullptr);
    CHECK(measurement(p, "cross_entropy.bwd", "backward") != nullptr);
    CHECK(measurement(p, "adamw", "optimizer") != nullptr);
    // The profile covers nearly all the measured time: only the final norm's backward (not one of podsim's ops) is
    // outside it.
    CHECK(p["trace"]["used_step_s"].get<double>() >= 0.95 * p["trace"]["measured_step_s"].get<double>());

    // Simulating with it reproduces each measured op exactly (the profile's times at the same shape).
    auto cmp = run_podsim("profile compare " + scen + " " + trace + " --kernel-profile " + prof + " --format json");
    REQUIRE_MESSAGE(cmp.exit_code == 0, cmp.err);
    const Json j = Json::parse(cmp.out);
    int measured = 0;
    for (const auto& o : j["ops"]) {
        if (o["events"].get<int>() == 0) continue;
        ++measured;
        CHECK_MESSAGE(std::abs(o["error_pct"].get<double>()) < 1e-6, o["op"].get<std::string>());
    }
    CHECK(measured >= 24);
    CHECK(j["simulated"]["optimizer_s"].get<double>() ==
          doctest::Approx(measurement(p, "adamw", "optimizer")->at("mean_s").get<double>()).epsilon(1e-9));

    // Another shape (sequences twice as long) is timed from the same profile by FLOPs: qkv's FLOPs double.
    const std::string scen2 = tiny_cpu_scenario_seq(128);
    auto cmp2 = run_podsim("profile compare " + scen2 + " " + trace + " --kernel-profile " + prof + " --format json");
    REQUIRE_MESSAGE(cmp2.exit_code == 0, cmp2.err);
    const Json ops2 = Json::parse(cmp2.out);  // (a named value: a range-for over a temporary's member dangles)
    for (const auto& o : ops2["ops"])
        if (o["op"] == "qkv") CHECK(o["simulated_s"].get<double>() == doctest::Approx(2 * (*q)["mean_s"].get<double>()));

    // It cannot be mixed with timing kernels here, and a trace with nothing to calibrate from is an input error.
    auto mixed = run_podsim("calibrate " + scen + " --from-trace " + trace + " --device cpu --out " + prof + ".x");
    CHECK(mixed.exit_code != 0);
    CHECK(mixed.err.find("--device") != std::string::npos);
    const std::string other = save("nothing.json", R"({"traceEvents": [{"ph": "X", "name": "??", "dur": 5}]})");
    auto none = run_podsim("calibrate " + scen + " --from-trace " + other + " --out " + prof + ".y");
    CHECK(none.exit_code == 1);
    CHECK(none.err.find("$.traceEvents") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(prof + ".y"));
}

TEST_CASE("calibrate --from-trace: a Kineto trace of vendor kernels gives a rate per kind") {
    // Tiny CPU shape: T = 2 x 64 tokens a micro-batch, h 128, ffn 512, vocab 1024, 2 layers, 2 micro-batches a
    // step. GEMM FLOPs a step: layers 3 x 2T(3h^2 + h^2 + 2 h ffn) x 2 layers x 2 micro-batches = 603,979,776, plus
    // logits 3 x 2 T h V x 2 = 201,326,592; 805,306,368 in all. In 2 steps of 20 ms of GEMM kernels each: 4.0e10/s.
    const std::string scen = tiny_cpu_scenario(), prof = temp_dir() + "/from-kineto.json";
    const std::string trace = save("kineto-rates.json", R"json({"traceEvents": [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 30000},
        {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16bf16_bf16f32", "ts": 10, "dur": 12000},
        {"ph": "X", "cat": "kernel", "name": "ampere_bf16_s16816gemm_bf16_128x64", "ts": 12100, "dur": 8000},
        {"ph": "X", "cat": "kernel", "name": "flash_fwd_kernel", "ts": 20200, "dur": 2000},
        {"ph": "X", "cat": "kernel", "name": "vectorized_elementwise_kernel", "ts": 22300, "dur": 1000},
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "ts": 30000, "dur": 30000},
        {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16bf16_bf16f32", "ts": 30010, "dur": 20000},
        {"ph": "X", "cat": "kernel", "name": "flash_bwd_kernel", "ts": 50100, "dur": 2000},
        {"ph": "X", "cat": "kernel", "name": "vectorized_elementwise_kernel", "ts": 52200, "dur": 1000}]})json");
    auto c = run_podsim("calibrate " + scen + " --from-trace " + trace + " --out " + prof);
    REQUIRE_MESSAGE(c.exit_code == 0, c.err);
    const Json p = read_json(prof);
    CHECK(p["measurements"].empty());
    const Json& r = p["kind_rates"];
    CHECK(r["matmul"]["work_per_step"].get<double>() == doctest::Approx(805'306'368.0));
    CHECK(r["matmul"]["measured_s_per_step"].get<double>() == doctest::Approx(20e-3));
    CHECK(r["matmul"]["flops_per_s"].get<double>() == doctest::Approx(805'306'368.0 / 20e-3));
    CHECK(r["attention"]["measured_s_per_step"].get<double>() == doctest::Approx(2e-3));
    CHECK(r["elementwise"]["measured_s_per_step"].get<double>() == doctest::Approx(1e-3));
    // Simulated with it, a GEMM takes its FLOPs over the rate: qkv = 2 T h 3h = 12,582,912 FLOPs.
    auto cmp = run_podsim("profile compare " + scen + " " + trace + " --kernel-profile " + prof + " --format json");
    REQUIRE_MESSAGE(cmp.exit_code == 0, cmp.err);
    const Json ops = Json::parse(cmp.out);
    for (const auto& o : ops["ops"])
        if (o["op"] == "qkv")
            CHECK(o["simulated_s"].get<double>() == doctest::Approx(12'582'912.0 / (805'306'368.0 / 20e-3)));
    // On an accelerator, a trace faster than the chip's peak was not of this chip, model or plan: the plan is
    // rejected with that reason, not simulated above peak. The same model on one H100: 805 MFLOP in 0.15 us of GEMMs
    // a step is 5.4e15 FLOP/s, above even its fp8 peak (1.98e15).
    Json gpu = read_json(scen);
    gpu["system"] = {{"machine_type", "a3-highgpu-8g"}, {"nodes", 1}};
    gpu["parallel"]["dp"] = 1;
    const std::string gpu_scen = save("tiny-h100.json", gpu.dump());
    Json fast = read_json(trace);
    for (auto& e : fast["traceEvents"])
        if (e["cat"] == "kernel") e["dur"] = 0.1;
    const std::string fast_trace = save("kineto-fast.json", fast.dump()), fast_prof = temp_dir() + "/fast.json";
    auto made = run_podsim("calibrate " + gpu_scen + " --from-trace " + fast_trace + " --out " + fast_prof);
    REQUIRE_MESSAGE(made.exit_code == 0, made.err);
    auto over = run_podsim("run " + gpu_scen + " --kernel-profile " + fast_prof);
    CHECK(over.exit_code != 0);
    const std::string said = over.out + over.err;
    CHECK_MESSAGE(said.find("above h100-sxm's peak") != std::string::npos, said);
}

TEST_CASE("a real Kineto trace (PyTorch on an MI250, from HolisticTraceAnalysis) is read as its kernels say") {
    // tests/data/traces/README.md: one profiled training step of a toy model; the profiler's second ProfilerStep
    // launched nothing. The expected figures are sums over the file's own events.
    const std::string trace = std::string(PODSIM_SOURCE_DIR) + "/tests/data/traces/hta-mi250-minitoy-train-kineto.json";
    const Json j = read_json(trace);
    double gemm_s = 0, optimizer_s = 0, memcpy_s = 0, kernels_s = 0;
    for (const auto& e : j["traceEvents"]) {
        if (e.value("ph", "") != "X") continue;
        const std::string name = e["name"], cat = e.value("cat", "");
        const double s = e["dur"].get<double>() * 1e-6;
        if (cat == "kernel") kernels_s += s;
        if (cat == "kernel" && name.rfind("Cijk_", 0) == 0) gemm_s += s;
        if (cat == "kernel" && name.find("multi_tensor_apply_kernel") != std::string::npos) optimizer_s += s;
        if (cat == "gpu_memcpy") memcpy_s += s;
    }
    REQUIRE(gemm_s > 0);
    auto cmp = run_podsim("profile compare " + tiny_cpu_scenario() + " " + trace + " --format json");
    REQUIRE_MESSAGE(cmp.exit_code == 0, cmp.err);
    const Json c = Json::parse(cmp.out);
    CHECK(c["trace"]["format"] == "kineto (device kernels)");
    CHECK(c["trace"]["steps"] == 1);
    const Json& by = c["measured_by_category_s"];
    CHECK(by["matmul"].get<double>() == doctest::Approx(gemm_s));
    CHECK(by["optimizer"].get<double>() == doctest::Approx(optimizer_s));
    CHECK(by["memory"].get<double>() == doctest::Approx(memcpy_s));
    CHECK(c["measured_step_s"].get<double>() == doctest::Approx(kernels_s + memcpy_s));
    // Nothing of it is left uncategorized.
    CHECK(by.count("other") == 0);
    // Calibrating from it: the GEMM kernels' time a step is the matmul rate's denominator.
    const std::string prof = temp_dir() + "/from-mi250.json";
    auto cal = run_podsim("calibrate " + tiny_cpu_scenario() + " --from-trace " + trace + " --out " + prof);
    REQUIRE_MESSAGE(cal.exit_code == 0, cal.err);
    const Json p = read_json(prof);
    CHECK(p["trace"]["steps"] == 1);
    CHECK(p["kind_rates"]["matmul"]["measured_s_per_step"].get<double>() == doctest::Approx(gemm_s));
    CHECK(p["kind_rates"]["matmul"]["flops_per_s"].get<double>() ==
          doctest::Approx(p["kind_rates"]["matmul"]["work_per_step"].get<double>() / gemm_s));
}
