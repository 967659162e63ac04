// podsim calibrate: the plan's real kernels, at the plan's shard shapes, measured on this machine.
#include <doctest/doctest.h>

#include <fstream>
#include <set>

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

TEST_CASE("calibrate --device cuda says plainly that this build has no CUDA") {
    auto r = run_podsim("calibrate " + scenario("seed-1.2t-v4-2048.json") + " --out " + temp_dir() +
                        "/x.json --device cuda");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("needs a build with nvcc and CUDA") != std::string::npos);
}
