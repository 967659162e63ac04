// The rest of a training run (issue #15): the input pipeline (a step the hosts cannot feed waits for its input) and
// checkpoints written to a named storage with its published caps, synchronously or asynchronously. Figures a reader
// can derive from the catalog's storage files.
#include <doctest/doctest.h>

#include <fstream>
#include <map>

#include "helpers.hpp"
#include "models/input_pipeline.hpp"
#include "models/scenario.hpp"

using podsim::Json;
using namespace podsim::test;

namespace {

Json scenario_json(const std::string& name) {
    std::ifstream in(scenario(name));
    return Json::parse(in);
}

std::string save(const std::string& name, const Json& j) {
    const std::string path = temp_dir() + "/" + name;
    write_file(path, j.dump());
    return path;
}

// GPT-3 175B on 16 A3 Mega VMs, each sequence with an 8 MB image, read from one Filestore Basic SSD instance.
Json image_heavy() {
    Json j = scenario_json("gpt3-175b-128xa3-mega.json");
    j["data"] = {{"storage", "filestore-basic-ssd"}, {"bytes_per_token", 2}, {"bytes_per_sample", 8e6},
                 {"source", "test: a multimodal corpus"}};
    return j;
}

}  // namespace

TEST_CASE("input pipeline: each host reads its share of the batch at the storage's cap, decodes on its cores") {
    const podsim::Scenario s = podsim::load_scenario(save("img.json", image_heavy()), catalog());
    REQUIRE(s.data);
    const auto t = podsim::input_timing(*s.data, s.system, 1536, 2048);
    CHECK(t.hosts == 128);
    CHECK(t.samples_per_host == approx(12));
    CHECK(t.bytes_per_host == approx(12 * (8e6 + 2 * 2048)));
    // One instance for the whole job: 1,200 MiB/s read (cloud.google.com/filestore/docs/performance).
    CHECK(t.storage_bytes_per_s == approx(1200.0 * 1048576));
    CHECK(t.storage_s == approx(t.bytes_per_host * 128 / (1200.0 * 1048576)));
    CHECK(t.bottleneck.find("instance limit") != std::string::npos);
    // CPU-bound instead: 10 core-seconds a sample on the VM's 208 vCPUs (catalog).
    podsim::DataSpec cpu = *s.data;
    cpu.storage = *catalog().find_storage("gcs");
    cpu.bytes_per_sample = 0;
    cpu.cpu_core_s_per_sample = 10;
    const auto c = podsim::input_timing(cpu, s.system, 1536, 2048);
    CHECK(c.cores == 208);
    CHECK(c.cpu_s == approx(12 * 10.0 / 208));
    CHECK(c.bottleneck.find("host CPU") != std::string::npos);
}

TEST_CASE("an input-bound step waits for its input in run and in search, and says so") {
    const std::string file = save("img.json", image_heavy());
    const auto r = run_podsim("run " + file + " --format json");
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const Json j = Json::parse(r.out);
    REQUIRE(j["input"].is_object());
    CHECK(j["input"]["input_bound"] == true);
    CHECK(j["step_time_s"].get<double>() == approx(j["input"]["per_step_s"].get<double>()));
    CHECK(j["breakdown_s"]["input_wait"].get<double>() > 0);
    const auto text = run_podsim("run " + file);
    CHECK(text.out.find("INPUT-BOUND") != std::string::npos);
    CHECK(text.out.find("Filestore Basic SSD") != std::string::npos);
    // The search prices every plan with the same wait: its best plan is input-bound too.
    const auto sr = run_podsim("search " + file + " --format json --top 1 --no-progress");
    REQUIRE(sr.exit_code == 0);
    const Json sj = Json::parse(sr.out);
    CHECK(sj["ranked"][0]["breakdown_s"]["input_wait"].get<double>() > 0);
    CHECK(sj["ranked"][0]["step_time_s"].get<double>() == approx(j["input"]["per_step_s"].get<double>()).epsilon(1e-9));
    // Without the data block the same plan is far faster.
    const auto plain = Json::parse(run_podsim("run " + scenario("gpt3-175b-128xa3-mega.json") + " --format json").out);
    CHECK(plain["step_time_s"].get<double>() < j["step_time_s"].get<double>());
    CHECK(plain["input"].is_null());
}

TEST_CASE("checkpoints: written to the named storage at its caps; asynchronous ones pause only for the copy") {
    Json j = scenario_json("gpt3-175b-128xa3-mega.json");
    j["checkpoint"] = {{"storage", "parallelstore"}, {"capacity_tib", 100}, {"source", "test"}};
    const Json sync = Json::parse(run_podsim("run " + save("sync.json", j) + " --format json").out);
    const auto& g = sync["cost"]["goodput"];
    // 175B x 14 bytes to Parallelstore at 100 TiB x 0.5 GiB/s per TiB (write), read back at 1.15 GiB/s per TiB.
    const double bytes = g["checkpoint_bytes"].get<double>();
    CHECK(g["checkpoint_write_s"].get<double>() == approx(bytes / (100 * 0.5 * 1073741824.0)));
    CHECK(g["restore_s"].get<double>() == approx(bytes / (100 * 1.15 * 1073741824.0)));
    CHECK(g["checkpoint_blocking_s"].get<double>() == approx(g["checkpoint_write_s"].get<double>()));
    CHECK(g["checkpoint_storage"].get<std::string>().find("per-TiB limit") != std::string::npos);
    j["checkpoint"]["async"] = true;
    j["checkpoint"]["device_to_host_bytes_per_s"] = 50e9;
    const Json async = Json::parse(run_podsim("run " + save("async.json", j) + " --format json").out);
    const auto& a = async["cost"]["goodput"];
    CHECK(a["checkpoint_blocking_s"].get<double>() == approx(bytes / 1024 / 50e9));
    CHECK(a["goodput"].get<double>() > g["goodput"].get<double>());
    // Bad input: capacity needed for per-TiB storage; a read-only volume cannot take checkpoints; async needs the copy rate.
    Json bad = scenario_json("gpt3-175b-128xa3-mega.json");
    bad["checkpoint"] = {{"storage", "parallelstore"}, {"source", "test"}};
    auto r = run_podsim("run " + save("bad1.json", bad));
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("$.checkpoint.capacity_tib") != std::string::npos);
    bad["checkpoint"] = {{"storage", "hyperdisk-ml"}, {"source", "test"}};
    r = run_podsim("run " + save("bad2.json", bad));
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("publishes no write throughput") != std::string::npos);
    bad["checkpoint"] = {{"storage", "gcs"}, {"async", true}, {"source", "test"}};
    r = run_podsim("run " + save("bad3.json", bad));
    CHECK(r.err.find("$.checkpoint.device_to_host_bytes_per_s") != std::string::npos);
    bad["checkpoint"] = {{"storage", "s3"}, {"source", "test"}};
    r = run_podsim("run " + save("bad4.json", bad));
    CHECK(r.err.find("parallelstore") != std::string::npos);  // the catalog's storages are listed
}

TEST_CASE("the seed scenario shows its input, checkpoint and restore times with their sources") {
    const auto r = run_podsim("run");
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("input pipeline") != std::string::npos);
    CHECK(r.out.find("checkpoint                   ") != std::string::npos);
    CHECK(r.out.find("Cloud Storage (gcsfuse)") != std::string::npos);
    CHECK(r.out.find("restored in") != std::string::npos);
    CHECK(r.out.find("our assumption for the seed") != std::string::npos);
    // Every storage figure in the catalog has its source (storage_from_json refuses one without).
    for (const auto& s : catalog().storage()) CHECK(!s.sources.empty());
}

TEST_CASE("recovery strategies: goodput and dollars for restart, waiting, spares, in-memory replicas and elastic") {
    // A 10k-GPU job: GPT-3 175B on 1,280 A3 Mega VMs (10,240 H100), a failure every ~5 h at Llama 3's rate.
    Json j = scenario_json("gpt3-175b-128xa3-mega.json");
    j["system"]["nodes"] = 1280;
    j["parallel"]["dp"] = 160;
    j["batch"]["global_batch_seqs"] = 2560;
    const auto r = run_podsim("run " + save("10k.json", j) + " --format json");
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const Json c = Json::parse(r.out)["cost"];
    std::map<std::string, Json> by_id;
    for (const auto& o : c["recovery"]) by_id[o["id"]] = o;
    REQUIRE(by_id.size() == 5);
    for (const auto& entry : by_id) {  // (no structured binding: clang 14 cannot capture one in CHECK)
        const std::string& id = entry.first;
        const Json& o = entry.second;
        CAPTURE(id);
        CHECK(o["applicable"] == true);
        CHECK(o["goodput"].get<double>() > 0.5);
        CHECK(o["usd_on_demand_with_failures"].get<double>() > 0);
    }
    // The catalog's restart is the goodput the rest of podsim uses.
    CHECK(by_id["restart"]["goodput"].get<double>() == approx(c["goodput"]["goodput"].get<double>()));
    // Waiting two hours for a replacement at every failure costs the most time; spares buy it back for their price;
    // elastic loses only 1/dp of the wait, for the hardware failures (each takes one host: one replica of 8 hosts);
    // a software failure restarts the ranks in place and waits for nothing.
    CHECK(by_id["wait"]["goodput"].get<double>() < by_id["restart"]["goodput"].get<double>());
    CHECK(by_id["spares"]["goodput"].get<double>() == approx(by_id["restart"]["goodput"].get<double>()));
    CHECK(by_id["spares"]["usd_on_demand_with_failures"].get<double>() >
          by_id["restart"]["usd_on_demand_with_failures"].get<double>());
    CHECK(by_id["spares"]["spare_hosts"].get<double>() == 13);  // 1% of 1,280 hosts, rounded up
    CHECK(by_id["elastic"]["goodput"].get<double>() > by_id["wait"]["goodput"].get<double>());
    double all_per_hour = 0, software_per_hour = 0;
    for (const auto& f : c["failures"]) {
        all_per_hour += f["per_hour"].get<double>();
        if (f["component"] == "software") software_per_hour = f["per_hour"].get<double>();
    }
    CHECK(3600 / all_per_hour == approx(c["goodput"]["mtbf_s"].get<double>()));
    CHECK(software_per_hour > 0);
    CHECK(by_id["elastic"]["downtime_per_failure_s"].get<double>() ==
          approx(by_id["in-memory"]["downtime_per_failure_s"].get<double>() +
                 7200.0 / 160 * (1 - software_per_hour / all_per_hour)));
    const auto text = run_podsim("run " + save("10k.json", j));
    CHECK(text.out.find("recovery: elastic") != std::string::npos);
    CHECK(text.out.find("replacement") != std::string::npos);
    // The rates are shown with their sources.
    CHECK(text.out.find("  chip") != std::string::npos);
    CHECK(text.out.find("arXiv:2407.21783") != std::string::npos);
}
