// podsim calibrate: the plan's real kernels, at the plan's shard shapes, measured on this machine.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <set>

#include "models/calibration/cpu_train_step.hpp"
#include "hardware/calibration/gpu_kernels.hpp"
#include "hardware/calibration/kernel_profile.hpp"
#include "models/calibration/loopback_dp.hpp"
#include "models/kernel_calibration.hpp"
#include "models/step.hpp"
#include "tests/helpers.hpp"

using namespace podsim::test;

TEST_CASE("calibrate measures every kernel kind of the plan at its shard shapes and writes a profile") {
    const std::string scen = temp_dir() + "/tiny.json";
    write_file(scen, R"({"schema_version": 1, "name": "tiny", "model": {"name": "tiny", "layers": 2, "hidden": 256,
        "ffn_hidden": 1024, "heads": 4, "vocab": 4096, "seq_len": 256, "activation": "swiglu", "bias": false,
        "dropout": false}, "system": {"machine_type": "dgx-a100", "nodes": 1},
        "parallel": {"dp": 4, "tp": 2, "pp": 1}, "batch": {"global_batch_seqs": 8, "micro_batch": 2},
        "training": {"precision": "bf16", "recompute": "none", "attention": "standard"}})");
    const std::string prof = temp_dir() + "/profile.json";
    auto r = run_podsim("calibrate " + scen + " --out " + prof + " --budget-s 1");
    REQUIRE(r.exit_code == 0);
    auto j = podsim::Json::parse(std::ifstream(prof));
    CHECK(j["device"]["type"] == "cpu");
    CHECK(j["libraries"]["blas"].get<std::string>().find("OpenBLAS") != std::string::npos);
    std::set<std::string> kinds;
    bool saw_qkv = false;
    for (const auto& m : j["measurements"]) {
        kinds.insert(m["kind"].get<std::string>());
        CHECK(m["median_s"].get<double>() > 0);
        CHECK(m["reps"].get<int>() >= 3);
        if (m["op"] == "qkv") {
            // TP 2 shards the fused QKV projection: N = 3 x 256 / 2 columns of K = 256 rows.
            CHECK(m["shape"]["n"] == 384);
            CHECK(m["shape"]["k"] == 256);
            CHECK(m["flops_per_s"].get<double>() > 1e8);
            saw_qkv = true;
        }
    }
    CHECK(saw_qkv);
    CHECK(kinds == std::set<std::string>{"matmul", "attention", "elementwise", "optimizer"});
}

TEST_CASE("calibrate --device cuda without a usable GPU says why and writes nothing") {
    std::string why;
    if (podsim::calib::gpu::available(&why)) return;  // a GPU machine: nothing to check here
    const std::string out = temp_dir() + "/x.json";
    auto r = run_podsim("calibrate " + scenario("seed-1.2t-v4-2048.json") + " --out " + out + " --device cuda");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--device cuda: ") != std::string::npos);
    CHECK(r.err.find(why) != std::string::npos);
    CHECK_FALSE(std::ifstream(out).good());
}

namespace {
// A profile file from fresh measurements, for the host CPU chip of the catalog.
podsim::calib::KernelProfile fresh_profile(const podsim::calib::TinyGpt& t, const std::string& name) {
    std::string table;
    const podsim::Json ms = podsim::calibrate_kernels(podsim::cpu_gpt_model(t), podsim::cpu_gpt_plan(t, 1), 4.0, table);
    const std::string file = temp_dir() + "/" + name + ".json";
    write_file(file, podsim::Json{{"schema_version", 1}, {"kind", "kernel-calibration"}, {"chip", "host-cpu"},
                                  {"device", {{"name", "this host"}}}, {"measurements", ms}}
                         .dump());
    return podsim::calib::load_kernel_profile(file);
}
}  // namespace

TEST_CASE("the C++ CPU training step learns: a fixed batch's loss falls from ln(vocab)") {
    podsim::calib::TinyGpt t{2, 128, 4, 512, 512, 64, 2, 1};
    podsim::calib::CpuTrainStep step(t);
    const float first = step.step();
    CHECK(first == approx(std::log(512.0)).epsilon(0.05));  // random init: uniform prediction
    float last = first;
    for (int i = 0; i < 15; ++i) last = step.step();
    CHECK(last < 0.7 * first);
}

TEST_CASE("closing the loop: a fresh calibration predicts the measured CPU training step within 15%") {
    // Three model shapes; each is calibrated (3 s budget) and then trained for real. The tolerance is the issue's
    // 15%; predictions use the fastest repetition of each kernel and the step's fastest of three runs.
    const podsim::calib::TinyGpt shapes[] = {{2, 256, 4, 1024, 4096, 256, 2, 2},
                                             {2, 384, 6, 1536, 4096, 256, 2, 2},
                                             {2, 512, 8, 2048, 4096, 128, 2, 2}};
    // Both sides are wall-clock measurements on a shared 2-core VM: a shape gets a second, fresh attempt (new
    // profile, new measurement) if the first lands outside the tolerance; the tolerance itself does not move.
    const podsim::SystemSpec host = catalog().gpu_system("host-cpu", 1, "test", "$");
    for (const auto& t : shapes) {
        double predicted_s = 0, measured_s = 0;
        for (int attempt = 0; attempt < 2; ++attempt) {
            const auto profile = fresh_profile(t, "cpu-profile");
            podsim::StepOptions opt;
            opt.kernels = &profile;
            const auto predicted =
                podsim::simulate_step(podsim::cpu_gpt_model(t), host, podsim::cpu_gpt_plan(t, 1), opt);
            REQUIRE(predicted.feasible);
            CHECK(predicted.efficiency_source.find("kernel profile") != std::string::npos);
            predicted_s = predicted.step_time_s;
            measured_s = podsim::calib::measure_train_step_s(t, 3);
            MESSAGE("hidden " << t.hidden << ", seq " << t.seq << ", attempt " << attempt + 1 << ": predicted "
                              << predicted_s << " s, measured " << measured_s << " s");
            if (std::fabs(predicted_s / measured_s - 1) <= 0.15) break;
        }
        CHECK(predicted_s == approx(measured_s).epsilon(0.15));
    }
}

extern "C" void openblas_set_num_threads(int);
extern "C" int openblas_get_num_threads();

TEST_CASE("data parallel on loopback: two processes with a real gradient all-reduce, predicted within 20%") {
    // Each rank runs on one core (one BLAS thread), so the compute profile is made with one thread too. The
    // simulator's part: the step from the profile, plus one ring all-reduce per gradient tensor over the
    // measured loopback bandwidth and latency.
    const podsim::calib::TinyGpt t{2, 384, 6, 1536, 4096, 256, 2, 2};
    const auto link = podsim::calib::measure_loopback();
    REQUIRE(link.bytes_per_s > 0);
    const int threads = openblas_get_num_threads();
    // As above: one fresh second attempt when the first lands outside the tolerance (shared 2-core VM).
    double predicted_s = 0, measured_s = 0;
    for (int attempt = 0; attempt < 2; ++attempt) {
        openblas_set_num_threads(1);
        const auto profile = fresh_profile(t, "cpu1-profile");
        openblas_set_num_threads(threads);
        const auto dp = podsim::calib::measure_dp_step(t, 3);
        // Two one-device "nodes" of the host, joined by the loopback link as measured.
        podsim::SystemSpec host = catalog().gpu_system("host-cpu", 2, "test", "$");
        host.node.gpu_nic_bytes_per_s = link.bytes_per_s;
        host.node.network_latency_s = link.latency_s;
        podsim::StepOptions opt;
        opt.kernels = &profile;
        const auto predicted = podsim::simulate_step(podsim::cpu_gpt_model(t), host, podsim::cpu_gpt_plan(t, 2), opt);
        REQUIRE(predicted.feasible);
        predicted_s = predicted.step_time_s, measured_s = dp.step_s;
        MESSAGE("loopback " << link.bytes_per_s / 1e9 << " GB/s, " << link.latency_s * 1e6 << " us; attempt "
                            << attempt + 1 << ": predicted " << predicted_s << " s (exposed communication "
                            << predicted.breakdown.exposed_comm_s << " s), measured " << measured_s
                            << " s (all-reduce " << dp.allreduce_s << " s)");
        if (std::fabs(predicted_s / measured_s - 1) <= 0.20) break;
    }
    CHECK(predicted_s == approx(measured_s).epsilon(0.20));
}

TEST_CASE("time_kernel: the budget counts from the warm-up; one repetition at least, more only while they fit") {
    int calls = 0;
    const auto t0 = podsim::calib::time_kernel([&] { ++calls; }, 0.0);
    CHECK(t0.reps == 1);
    CHECK(calls == 2);  // warm-up + one timed repetition
    calls = 0;
    CHECK(podsim::calib::time_kernel([&] { ++calls; }, 0.0, 3).reps == 3);
    CHECK(podsim::calib::time_kernel([&] { ++calls; }, 10.0).reps == 50);  // a cheap kernel stops at 50
}

TEST_CASE("calibrate --budget-s is a bound: DeepSeek-V3 in 5 s, kernels over the budget skipped with the reason") {
    // Before issue #10 this took 238 s and 3.97 GB: every kernel ran at least 64 tokens and six times, whatever the
    // budget, and the logits GEMM's 3.7 GB weights were allocated whole.
    const std::string prof = temp_dir() + "/deepseek-profile.json";
    const auto t0 = std::chrono::steady_clock::now();
    auto r = run_podsim("calibrate " + scenario("deepseek-v3-671b-2048xh800.json") + " --out " + prof + " --budget-s 5");
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(wall_s < 60);  // generous: process start and a loaded 2-core CI machine; the profile's own figure is tight
    auto j = podsim::Json::parse(std::ifstream(prof));
    MESSAGE("calibrate DeepSeek-V3 --budget-s 5: " << wall_s << " s wall, " << j["elapsed_s"].get<double>()
                                                    << " s recorded, peak " << j["peak_rss_bytes"].get<double>() / (1 << 20)
                                                    << " MiB, " << j["measurements"].size() << " kernels measured, "
                                                    << j["skipped"].size() << " skipped");
    CHECK(j["budget_s"] == 5);
    CHECK(j["elapsed_s"].get<double>() <= 5 + 1.0);
    CHECK(j["largest_kernel_bytes"].get<double>() <= j["memory_limit_bytes_per_kernel"].get<double>());
    CHECK(j["peak_rss_bytes"].get<double>() < 1024.0 * (1 << 20));
    CHECK(j["measurements"].size() >= 5);
    for (const auto& s : j["skipped"]) CHECK(s["reason"].get<std::string>().find("over the") != std::string::npos);
    for (const auto& m : j["measurements"]) CHECK(m["reps"].get<int>() >= 1);
    CHECK(r.out.find("of the 5 s budget") != std::string::npos);
    // The profile still loads (skipped kernels fall back to the fitted per-kind models).
    CHECK_NOTHROW(podsim::calib::load_kernel_profile(prof));
}

TEST_CASE("calibrate --budget-s below a second, or not a finite number, is a usage error") {
    for (const char* b : {"0.5", "0", "-3", "nan", "inf", "1e400", "five"}) {
        CAPTURE(b);
        auto r = run_podsim("calibrate " + scenario("seed-1.2t-v4-2048.json") + " --out " + temp_dir() +
                            "/never.json --budget-s " + b);
        CHECK(r.exit_code == 2);
        CHECK(r.err.find("--budget-s") != std::string::npos);
    }
}
