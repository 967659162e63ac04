// Sweeps beyond one machine (issue #16): shards merged equal the unsharded sweep byte for byte, bad shard sets are
// refused, and deploy/'s GKE Indexed Job and Slurm array script are what Kubernetes and Slurm accept.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "tests/helpers.hpp"

using namespace podsim::test;
namespace fs = std::filesystem;

namespace {

const fs::path kRoot = fs::path(PODSIM_SCENARIO_DIR).lexically_normal().parent_path();

int shell(const std::string& cmd) {
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string python() { return fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3"; }

}  // namespace

TEST_CASE("sweep --shard K/N, merged: the unsharded sweep's CSV and JSON, byte for byte") {
    const std::string dir = temp_dir() + "/shards", sweep = scenario("sweeps/gpt3-175b-what-if.json");
    fs::create_directories(dir);
    auto whole = run_podsim("sweep " + sweep + " --csv " + dir + "/all.csv --json " + dir + "/all.json --no-progress");
    REQUIRE_MESSAGE(whole.exit_code == 0, whole.err);
    for (int k = 0; k < 4; ++k) {
        auto s = run_podsim("sweep " + sweep + " --shard " + std::to_string(k) + "/4 --json " + dir + "/s" +
                            std::to_string(k) + ".json --no-progress");
        REQUIRE_MESSAGE(s.exit_code == 0, s.err);
    }
    // In any order of files.
    auto m = run_podsim("sweep merge " + dir + "/s2.json " + dir + "/s0.json " + dir + "/s3.json " + dir +
                        "/s1.json --csv " + dir + "/m.csv --json " + dir + "/m.json");
    REQUIRE_MESSAGE(m.exit_code == 0, m.err);
    CHECK(slurp(dir + "/m.csv") == slurp(dir + "/all.csv"));
    CHECK(slurp(dir + "/m.json") == slurp(dir + "/all.json"));
    CHECK(slurp(dir + "/all.csv").size() > 1000);
    // Interleaved: shard k holds the points i with i % 4 == k.
    const std::string s1 = slurp(dir + "/s1.json");
    CHECK(s1.find("\"index\": 1,") != std::string::npos);
    CHECK(s1.find("\"index\": 5,") != std::string::npos);
    CHECK(s1.find("\"index\": 2,") == std::string::npos);

    // A missing shard, a shard given twice, and a shard of another sweep are refused with the file and JSON path.
    auto missing = run_podsim("sweep merge " + dir + "/s0.json " + dir + "/s1.json " + dir + "/s2.json --csv " + dir + "/x.csv");
    CHECK(missing.exit_code == 1);
    CHECK(missing.err.find("$.shard.count: all 4 shards; missing 3") != std::string::npos);
    CHECK_FALSE(fs::exists(dir + "/x.csv"));
    auto twice = run_podsim("sweep merge " + dir + "/s0.json " + dir + "/s0.json");
    CHECK(twice.exit_code == 1);
    CHECK(twice.err.find("$.shard.index") != std::string::npos);
    // (Another sweep: the same grid over the base scenario named by its absolute path, from another folder.)
    std::string other = slurp(sweep);
    const std::string base_ref = "../gpt3-175b-128xa3-mega.json";
    REQUIRE(other.find(base_ref) != std::string::npos);
    other.replace(other.find(base_ref), base_ref.size(), scenario("gpt3-175b-128xa3-mega.json"));
    const std::string other_sweep = dir + "/other-sweep.json";
    write_file(other_sweep, other);
    auto o3 = run_podsim("sweep " + other_sweep + " --shard 3/4 --json " + dir + "/o3.json --no-progress");
    REQUIRE_MESSAGE(o3.exit_code == 0, o3.err);
    auto mixed = run_podsim("sweep merge " + dir + "/s0.json " + dir + "/s1.json " + dir + "/s2.json " + dir + "/o3.json");
    CHECK(mixed.exit_code == 1);
    CHECK(mixed.err.find("$.fingerprint") != std::string::npos);
    // Bad shard specs are usage errors; a shard writes only its own file.
    for (const char* bad : {"4/4", "-1/4", "1/0", "x/4", "3"}) {
        CAPTURE(bad);
        auto r = run_podsim("sweep " + sweep + " --shard " + std::string(bad) + " --json " + dir + "/bad.json");
        CHECK(r.exit_code == 2);
        CHECK_FALSE(fs::exists(dir + "/bad.json"));
    }
    CHECK(run_podsim("sweep " + sweep + " --shard 0/4 --csv " + dir + "/bad.csv").exit_code == 2);
    auto not_shard = run_podsim("sweep merge " + dir + "/all.json");
    CHECK(not_shard.exit_code == 1);
    CHECK(not_shard.err.find("$.kind") != std::string::npos);
}

TEST_CASE("deploy/gke-sweep-job.yaml is an Indexed Job Kubernetes accepts, with one shard per completion index") {
    // tests/check_k8s_indexed_job.py applies Kubernetes' rules to the YAML as PyYAML reads it (python3-yaml).
    const std::string check = python() + " " + (kRoot / "tests" / "check_k8s_indexed_job.py").string() + " ";
    const std::string manifest = (kRoot / "deploy" / "gke-sweep-job.yaml").string();
    CHECK(shell(check + manifest + " >/dev/null") == 0);
    // The checker fails what Kubernetes would refuse: a Job that restarts Always, shards that do not match the
    // completions, or no completion mode.
    const std::string text = slurp(manifest);
    auto broken = [&](const std::string& from, const std::string& to) {
        std::string t = text;
        const auto at = t.find(from);
        REQUIRE(at != std::string::npos);
        t.replace(at, from.size(), to);
        const std::string f = temp_dir() + "/broken.yaml";
        write_file(f, t);
        return shell(check + f + " >/dev/null");
    };
    CHECK(broken("restartPolicy: Never", "restartPolicy: Always") == 1);
    CHECK(broken("completions: 4", "completions: 5") == 1);
    CHECK(broken("completionMode: Indexed", "completionMode: NonIndexed") == 1);
    CHECK(broken("name: podsim\n", "name: Podsim_1\n") == 1);
}

TEST_CASE("deploy/slurm-sweep.sh: array tasks write the shards, the merge job waits for them") {
    const std::string script = (kRoot / "deploy" / "slurm-sweep.sh").string();
    REQUIRE(shell("bash -n " + script) == 0);
    const std::string dir = temp_dir() + "/slurm", sweep = scenario("sweeps/gpt3-175b-what-if.json");
    fs::remove_all(dir);
    fs::create_directories(dir + "/bin");
    // Submitting: a stand-in sbatch on PATH records what it is asked to run.
    write_file(dir + "/bin/sbatch", "#!/bin/sh\nprintf '%s\\n' \"$*\" >> " + dir + "/sbatch.log\necho 4242\n");
    REQUIRE(shell("chmod +x " + dir + "/bin/sbatch") == 0);
    REQUIRE(shell("PATH=" + dir + "/bin:$PATH PODSIM=" + PODSIM_BINARY + " bash " + script + " " + sweep + " " + dir +
                  "/out 4 >/dev/null") == 0);
    const std::string log = slurp(dir + "/sbatch.log");
    CHECK(log.find("--array=0-3") != std::string::npos);
    CHECK(log.find("--dependency=afterok:4242") != std::string::npos);
    CHECK(log.find("sweep merge") != std::string::npos);
    CHECK(log.find("shard-3.json") != std::string::npos);
    // Each array task as Slurm runs it, then the merge job's command: the unsharded sweep's CSV.
    for (int k = 0; k < 4; ++k)
        REQUIRE(shell("SLURM_ARRAY_TASK_ID=" + std::to_string(k) + " SLURM_ARRAY_TASK_COUNT=4 PODSIM=" +
                      PODSIM_BINARY + " bash " + script + " " + sweep + " " + dir + "/out") == 0);
    auto m = run_podsim("sweep merge " + dir + "/out/shard-0.json " + dir + "/out/shard-1.json " + dir +
                        "/out/shard-2.json " + dir + "/out/shard-3.json --csv " + dir + "/merged.csv");
    REQUIRE_MESSAGE(m.exit_code == 0, m.err);
    auto whole = run_podsim("sweep " + sweep + " --no-progress");
    REQUIRE(whole.exit_code == 0);
    CHECK(slurp(dir + "/merged.csv") == whole.out);
}
