// Exports are right only if the tool they feed accepts them (issue #14): MaxText settings are checked against
// MaxText's own rules, Megatron-LM flags against Megatron-LM's, gcloud lines are run by bash (with gcloud stubbed)
// and use Cloud TPU's accelerator names, and the sweep CSV loads in pandas with one row per grid point. The rules
// are restated here from the frameworks' sources (cited at each check), not from podsim's code.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "models/plan_space.hpp"
#include "models/scenario.hpp"
#include "models/step.hpp"
#include "planner/search.hpp"
#include "reports/provision.hpp"
#include "tests/helpers.hpp"

using namespace podsim;

namespace {

const ReliabilityInputs& rel() {
    static const ReliabilityInputs r = load_reliability(default_catalog_dir());
    return r;
}

long long integer(const FrameworkSettings& f, const std::string& key) {
    const std::string* v = f.find(key);
    REQUIRE_MESSAGE(v != nullptr, key << " missing from " << f.line());
    size_t used = 0;
    const long long x = std::stoll(*v, &used);
    REQUIRE_MESSAGE(used == v->size(), key << "=" << *v << " is not an integer");
    return x;
}

// MaxText (AI-Hypercomputer/maxtext e591f30, src/maxtext/configs/types.py and utils/max_utils.py). Returns the
// first broken rule, or "".
std::string maxtext_violation(const FrameworkSettings& f, const SystemSpec& sys, const ModelSpec& m,
                              long long global_batch) {
    long long ici = 1, dcn = 1;
    for (const auto& [k, v] : f.settings) {
        const bool is_ici = k.rfind("ici_", 0) == 0, is_dcn = k.rfind("dcn_", 0) == 0;
        if (!is_ici && !is_dcn) continue;
        const long long x = integer(f, k);
        if (x < 1) return k + " must be >= 1 (no axis left at -1), got " + v;
        (is_ici ? ici : dcn) *= x;
    }
    // fill_unspecified_mesh_axes: "Number of devices ... must equal the product of the ICI parallelism".
    // A device is a TensorCore on TPU7x and v3 (two per chip), a chip elsewhere.
    if (ici != static_cast<long long>(sys.chips / sys.slices) * sys.chip.devices_per_chip)
        return "ICI axes multiply to " + std::to_string(ici) + ", not the slice's devices";
    // base.yml's remat_policy choices, and with custom each checkpoint name's place (remat, device or offload).
    if (const std::string* rp = f.find("remat_policy")) {
        static const std::set<std::string> policies = {
            "minimal_with_context", "minimal", "save_dot_with_context_except_mlp", "save_dot_except_mlpwi",
            "save_dot_except_mlp", "save_qkv_proj", "qkv_proj_offloaded", "custom", "minimal_offloaded",
            "save_out_proj", "full"};
        if (!policies.count(*rp)) return "remat_policy " + *rp + " is not one of base.yml's";
        static const std::set<std::string> names = {
            "decoder_layer_input", "context", "mlpwi", "mlpwi_0", "mlpwi_1", "mlpwo", "moe_mlpwi_0", "moe_mlpwi_1",
            "moe_mlpwo", "query_proj", "key_proj", "value_proj", "kv_proj", "qkv_proj", "out_proj"};
        int named = 0;
        for (const auto& [k, v] : f.settings) {
            if (!names.count(k)) continue;
            ++named;
            if (*rp != "custom") return k + " set without remat_policy=custom";
            if (v != "remat" && v != "device" && v != "offload") return k + "=" + v + ": not remat, device or offload";
            if (k == "decoder_layer_input" && v == "remat") return "decoder_layer_input cannot be rematerialized";
        }
        if (*rp == "custom" && named == 0) return "remat_policy=custom without any tensor's place";
    }
    if (dcn != sys.slices) return "DCN axes multiply to " + std::to_string(dcn) + ", not the slices";
    const double pdbs = std::stod(*f.find("per_device_batch_size"));
    // calculate_global_batch_sizes: int(per_device_batch_size x devices); a TPU7x chip is two JAX devices.
    const long long per_step = static_cast<long long>(pdbs * sys.chips * sys.chip.devices_per_chip);
    const long long accum = integer(f, "gradient_accumulation_steps");
    if (per_step * accum != global_batch) return "per_device_batch_size x devices x accumulation != global batch";
    const long long stages = integer(f, "ici_pipeline_parallelism") * integer(f, "dcn_pipeline_parallelism");
    if (stages > 1) {
        const long long repeats = integer(f, "num_pipeline_repeats"), per = integer(f, "num_layers_per_pipeline_stage");
        if (stages * repeats * per != m.layers) return "stages x repeats x layers per stage != decoder layers";
        const long long micro = integer(f, "num_pipeline_microbatches");
        if (micro % stages != 0) return "num_pipeline_microbatches not divisible by the stages";
        if (per_step % micro != 0) return "micro_batch_size_to_train_on not divisible by num_pipeline_microbatches";
    }
    // base.yml's wi_tile_* / wo_tile_*_batch_seq: the grouped matmul's M-tile, whole 128-row blocks (openxla/tokamax
    // ragged_dot/pallas_mosaic_tpu.py: "Tiling on TPU technically needs to be a multiple of 128").
    for (const auto& [k, v] : f.settings) {
        if (k.rfind("wi_tile_", 0) != 0 && k.rfind("wo_tile_", 0) != 0) continue;
        if (k.size() < 10 || k.substr(k.size() - 10) != "_batch_seq") return k + " is not a batch_seq tile podsim sets";
        const long long rows = integer(f, k);
        if (rows <= 0 || rows % 128 != 0) return k + "=" + v + ": not a positive multiple of 128";
    }
    if (const std::string* q = f.find("quantization"); q && *q == "fp8" && accum > 1)
        return "fp8 quantization with gradient accumulation";
    // base.yml: context_parallel_strategy "all_gather", "ring", "ulysses" or "usp"; layers/attention_op.py: "TPU
    // Tokamax ring attention requires use_tokamax_splash=True".
    if (const std::string* cps = f.find("context_parallel_strategy")) {
        if (*cps != "all_gather" && *cps != "ring" && *cps != "ulysses" && *cps != "usp")
            return "context_parallel_strategy " + *cps + " is not one of base.yml's";
        const std::string* tok = f.find("use_tokamax_splash");
        if (*cps == "ring" && (!tok || *tok != "true")) return "ring context parallelism without use_tokamax_splash";
    }
    return "";
}

// Megatron-LM's --pipeline-model-parallel-layout parser (pipeline_parallel_layer_layout.py parse_str_to_list).
std::vector<std::string> megatron_layout_stages(std::string s) {
    s.erase(std::remove(s.begin(), s.end(), '"'), s.end());
    s.erase(std::remove(s.begin(), s.end(), ','), s.end());
    for (const std::regex& re : {std::regex(R"(\(([^)]+)\)\*(\d+))"), std::regex(R"((.)\*(\d+))")}) {
        std::smatch mt;
        std::string out;
        auto it = s.cbegin();
        while (std::regex_search(it, s.cend(), mt, re)) {
            out.append(it, mt[0].first);
            for (int i = 0; i < std::stoi(mt[2].str()); ++i) out += mt[1].str();
            it = mt[0].second;
        }
        out.append(it, s.cend());
        s = out;
    }
    std::vector<std::string> stages;
    std::stringstream ss(s);
    std::string st;
    while (std::getline(ss, st, '|')) stages.push_back(st);
    if (!s.empty() && s.back() == '|') stages.push_back("");
    return stages;
}

// Megatron-LM (NVIDIA/Megatron-LM d98e8a6, megatron/training/arguments.py, pipeline_parallel/schedules.py).
std::string megatron_violation(const FrameworkSettings& f, const SystemSpec& sys, const ModelSpec& m) {
    auto has = [&](const char* k) { return f.find(k) != nullptr; };
    const long long tp = integer(f, "--tensor-model-parallel-size"), pp = integer(f, "--pipeline-model-parallel-size");
    const long long cp = has("--context-parallel-size") ? integer(f, "--context-parallel-size") : 1;
    if (sys.chips % (tp * pp * cp) != 0) return "world size not divisible by tp x pp x cp";
    const long long dp = sys.chips / (tp * pp * cp);
    if (integer(f, "--global-batch-size") % (integer(f, "--micro-batch-size") * dp) != 0)
        return "global batch not divisible by micro-batch x data-parallel size";
    long long vpp = 1;
    if (has("--pipeline-model-parallel-layout")) {
        const auto stages = megatron_layout_stages(*f.find("--pipeline-model-parallel-layout"));
        long long decoder = 0;
        for (const auto& st : stages)
            for (char c : st) {
                if (std::string("ELtm").find(c) == std::string::npos) return std::string("bad layout character ") + c;
                decoder += c == 't';
            }
        if (decoder != m.layers) return "layout holds " + std::to_string(decoder) + " decoder layers";
        if (stages.size() % pp != 0) return "layout stages not divisible by pp";
        if (stages.front().find('E') != 0 || stages.back().find('L') == std::string::npos) return "E/L misplaced";
        vpp = static_cast<long long>(stages.size()) / pp;
    } else {
        if (m.layers % pp != 0) return "layers not divisible by the pipeline size";
        if (has("--num-layers-per-virtual-pipeline-stage")) {
            const long long per = integer(f, "--num-layers-per-virtual-pipeline-stage");
            if ((m.layers / pp) % per != 0) return "layers per stage not divisible by layers per virtual stage";
            vpp = m.layers / pp / per;
        }
    }
    if (vpp > 1 && !has("--overlap-p2p-communication") && pp <= 2) return "interleaving with pp <= 2 needs p2p overlap";
    if (has("--sequence-parallel") && tp == 1) return "--sequence-parallel with tp 1";
    // --cp-comm-type: "p2p, a2a, allgather or a2a+p2p" (one value for every layer here).
    if (has("--cp-comm-type")) {
        const std::string& t = *f.find("--cp-comm-type");
        if (t != "p2p" && t != "a2a" && t != "allgather" && t != "a2a+p2p") return "--cp-comm-type " + t;
    }
    if (has("--tp-comm-overlap") && !has("--sequence-parallel")) return "--tp-comm-overlap without --sequence-parallel";
    if (has("--overlap-param-gather") &&
        (!(has("--use-distributed-optimizer") || has("--use-megatron-fsdp")) || !has("--overlap-grad-reduce")))
        return "--overlap-param-gather needs the distributed optimizer (or Megatron-FSDP) and --overlap-grad-reduce";
    if (has("--use-megatron-fsdp") && (!has("--ckpt-format") || *f.find("--ckpt-format") != "fsdp_dtensor"))
        return "Megatron-FSDP needs --ckpt-format fsdp_dtensor";
    if (has("--use-torch-fsdp2") && (pp > 1 || has("--expert-model-parallel-size")))
        return "--use-torch-fsdp2 with pipeline or expert parallelism";
    // TransformerConfig.__post_init__: CPU offloading of fewer than all layers, without pipelining or recomputation.
    if (has("--cpu-offloading-num-layers") != has("--cpu-offloading")) return "--cpu-offloading-num-layers alone";
    if (has("--cpu-offloading")) {
        const long long k = integer(f, "--cpu-offloading-num-layers");
        if (k < 0 || k >= m.layers) return "cpu_offloading_num_layers outside [0, num_layers)";
        if (pp > 1) return "CPU offloading with pipeline parallelism";
        if (has("--recompute-granularity")) return "CPU offloading with activation recomputation";
    }
    if (has("--expert-model-parallel-size")) {
        const long long ep = integer(f, "--expert-model-parallel-size"), etp = integer(f, "--expert-tensor-parallel-size");
        if ((tp * cp * dp) % (ep * etp) != 0) return "tp x cp x dp not divisible by ep x etp";
    }
    return "";
}

void check_settings(const Scenario& s, const SystemSpec& sys, const ParallelPlan& p, int& checked, int& blocked) {
    const FrameworkSettings f = sys.is_gpu ? megatron_settings(sys, s.model, p) : maxtext_settings(sys, s.model, p);
    INFO(s.file << ": " << describe_plan(p) << " -> " << f.framework << " " << f.line());
    if (!f.blockers.empty()) {
        ++blocked;
        return;  // said why the framework cannot run it; the settings are not offered as runnable
    }
    ++checked;
    CHECK(f.line().find("\n") == std::string::npos);
    CHECK((sys.is_gpu ? megatron_violation(f, sys, s.model) : maxtext_violation(f, sys, s.model, p.global_batch)) ==
          "");
}

}  // namespace

TEST_CASE("framework settings obey MaxText's and Megatron-LM's rules: each shipped scenario's best plan and a "
          "sample of its space") {
    int checked = 0, blocked = 0, best_blocked = 0;
    for (const std::string& file : test::shipped_scenarios()) {
        const Scenario s = load_scenario(file, test::catalog());
        SearchOptions o;
        o.top = 1, o.confirm = 1;
        const SearchResult r = search_plans(s, test::catalog(), rel(), o);
        if (!r.ranked.empty()) {
            const int before = blocked;
            check_settings(s, r.ranked.front().system, r.ranked.front().plan, checked, blocked);
            best_blocked += blocked - before;
            if (blocked > before) {
                const RankedPlan& b = r.ranked.front();
                const FrameworkSettings f = b.system.is_gpu ? megatron_settings(b.system, s.model, b.plan)
                                                            : maxtext_settings(b.system, s.model, b.plan);
                MESSAGE(file << ": the best plan (" << describe_plan(b.plan) << ") is not runnable in " << f.framework
                             << " as priced: " << f.blockers.front());
            }
        }
        StepEstimator est(s.model, s.system);
        std::vector<ParallelPlan> fit;
        for_each_plan(s.system, s.plan, default_plan_space(s.model, s.system, s.plan), [&](const ParallelPlan& p) {
            if (fit.size() < 4000 && est.estimate(p).feasible()) fit.push_back(p);
        });
        for (size_t i = 0; i < fit.size(); i += std::max<size_t>(1, fit.size() / 25)) {
            check_settings(s, s.system, fit[i], checked, blocked);
            if (!s.system.is_gpu) {  // the same plan under a MaxText named-tensor policy, offloading the layer input
                ParallelPlan named = fit[i];
                const auto policy = maxtext_remat_policy("save_dot_except_mlp");
                REQUIRE(policy);
                named.recompute = policy->recompute, named.remat = policy->names;
                named.remat.device &= ~(1u << unsigned(RematTensor::layer_input));
                named.remat.offload |= 1u << unsigned(RematTensor::layer_input);
                check_settings(s, s.system, named, checked, blocked);
            }
        }
    }
    MESSAGE(checked << " plans' settings checked against the framework's rules; " << blocked
                    << " plans the framework cannot run as priced (with the reason), " << best_blocked
                    << " of them a scenario's best plan");
    CHECK(checked > 200);
}

TEST_CASE("MaxText settings on multislice: pipeline and data axes split between ICI and DCN as podsim placed them") {
    const ModelSpec m = load_scenario(test::scenario("seed-1.2t-v4-2048.json"), test::catalog()).model;
    const SystemSpec sys = test::catalog().tpu_system("v6e-256", 4, "test", "$");
    ParallelPlan p;
    p.tp = 8, p.pp = 32, p.dp = 4, p.zero = 3, p.micro_batch = 1, p.global_batch = 512;
    FrameworkSettings f = maxtext_settings(sys, m, p);
    INFO(f.line());
    // One slice holds tp 8 x pp 32 = 256 chips; the 4 replicas are the 4 slices.
    CHECK(*f.find("ici_pipeline_parallelism") == "32");
    CHECK(*f.find("dcn_data_parallelism") == "4");
    CHECK(*f.find("ici_fsdp_parallelism") == "1");
    CHECK(*f.find("num_pipeline_microbatches") == "128");  // 512 / (4 x 1)
    CHECK(*f.find("gradient_accumulation_steps") == "1");
    if (m.layers % 32 == 0) CHECK(maxtext_violation(f, sys, m, p.global_batch) == "");
    else CHECK(!f.blockers.empty());  // MaxText needs the layers to split evenly over the stages
    // The pipeline over the slices: 128 stages, 32 in each slice.
    p.pp = 128, p.dp = 1;
    f = maxtext_settings(sys, m, p);
    CHECK(*f.find("ici_pipeline_parallelism") == "32");
    CHECK(*f.find("dcn_pipeline_parallelism") == "4");
    CHECK(*f.find("dcn_data_parallelism") == "1");
    // No pipeline, 4 micro-batches per replica: MaxText's gradient accumulation, per-device batch per step.
    ParallelPlan q;
    q.tp = 4, q.dp = 256, q.zero = 3, q.micro_batch = 1, q.global_batch = 1024;
    f = maxtext_settings(sys, m, q);
    CHECK(*f.find("gradient_accumulation_steps") == "4");
    CHECK(*f.find("per_device_batch_size") == "0.25");  // 256 sequences per step over 1,024 chips
    CHECK(*f.find("ici_fsdp_parallelism") == "64");
    CHECK(maxtext_violation(f, sys, m, q.global_batch) == "");
    // fp8 with accumulation is refused by MaxText: a blocker, not settings that fail at start-up.
    q.precision = Precision::fp8;
    CHECK(!maxtext_settings(sys, m, q).blockers.empty());
}

TEST_CASE("Megatron-LM flags: uneven stages as a pipeline layout, TP overlap only inside one NVLink domain") {
    const Scenario s = load_scenario(test::scenario("seed-1.2t-a4x-1152xgb200.json"), test::catalog());
    ParallelPlan p = s.plan;
    p.tp = 8, p.pp = 72, p.vpp = 1, p.cp = 1, p.dp = s.system.chips / (8 * 72), p.micro_batch = 1;
    p.global_batch = 1152;
    FrameworkSettings f = megatron_settings(s.system, s.model, p);
    INFO(f.line());
    if (s.model.layers % 72 != 0) CHECK(f.find("--pipeline-model-parallel-layout") != nullptr);
    CHECK(megatron_violation(f, s.system, s.model) == "");
    // TP 16 on 8-GPU A3 Mega VMs spans two NVLink domains: no --tp-comm-overlap, a note instead.
    const Scenario g = load_scenario(test::scenario("gpt3-175b-128xa3-mega.json"), test::catalog());
    ParallelPlan q = g.plan;
    q.tp = 16, q.sp = true, q.tp_comm_overlap = TpOverlap::full, q.pp = 1, q.vpp = 1, q.cp = 1, q.dp = g.system.chips / 16;
    f = megatron_settings(g.system, g.model, q);
    CHECK(f.find("--tp-comm-overlap") == nullptr);
    CHECK(std::any_of(f.notes.begin(), f.notes.end(), [](const std::string& n) { return n.find("NVLink domain") != std::string::npos; }));
    q.tp = 8, q.dp = g.system.chips / 8;
    CHECK(megatron_settings(g.system, g.model, q).find("--tp-comm-overlap") != nullptr);
}

TEST_CASE("gcloud lines: Cloud TPU's accelerator names, and a script bash runs (gcloud stubbed) without word splitting") {
    CHECK(cloud_accelerator_type(test::catalog().tpu_system("v5e-256", 1, "t", "$")) == "v5litepod-256");
    CHECK(cloud_accelerator_type(test::catalog().tpu_system("v5litepod-64", 2, "t", "$")) == "v5litepod-64");
    CHECK(cloud_accelerator_type(test::catalog().tpu_system("v4-2048", 2, "t", "$")) == "v4-2048");
    const std::string dir = test::temp_dir();
    for (const std::string name : {"seed-1.2t-v4-2048.json", "gpt3-175b-128xa3-mega.json", "llama3-405b-v5p.json"})
        for (const std::string& region : {std::string(), std::string("us-central1")}) {
            const Scenario s = load_scenario(test::scenario(name), test::catalog());
            const Provisioning pv = provisioning_for(s.name, s.system, s.model, s.plan, PriceOption::spot, region);
            std::string script = "set -eu\ngcloud() { for a in \"$@\"; do printf '<%s>\\n' \"$a\"; done; }\n";
            for (const auto& c : pv.commands) script += c + "\n";
            test::write_file(dir + "/p.sh", script);
            INFO(script);
            // Without the user's values: stops at once, saying which to set.
            const int unset_rc = std::system(("env -i bash " + dir + "/p.sh >" + dir + "/out 2>" + dir + "/err").c_str());
            CHECK(unset_rc != 0);
            std::ifstream err(dir + "/err");
            const std::string err_text((std::istreambuf_iterator<char>(err)), {});
            CHECK(err_text.find("set PROJECT") != std::string::npos);
            // With them: every gcloud argument arrives as one word.
            const int rc = std::system(("env -i PROJECT=my-proj ZONE=us-central1-a IMAGE_FAMILY=fam bash " + dir +
                                        "/p.sh >" + dir + "/out 2>" + dir + "/err").c_str());
            REQUIRE(rc == 0);
            std::ifstream out(dir + "/out");
            const std::string args((std::istreambuf_iterator<char>(out)), {});
            CHECK(args.find("<--project=my-proj>") != std::string::npos);
            CHECK(args.find("<--zone=us-central1-a>") != std::string::npos);
            if (s.system.is_gpu) {
                CHECK(args.find("<--region=us-central1>") != std::string::npos);
                CHECK(args.find("<--image-family=fam>") != std::string::npos);
            } else {
                CHECK(args.find("<--accelerator-type=" + cloud_accelerator_type(s.system) + ">") != std::string::npos);
            }
            CHECK(args.find("$") == std::string::npos);  // nothing left unexpanded
        }
}

TEST_CASE("sweep CSV: a fixed column set, status and reason on infeasible points, one row per point in pandas") {
    const std::string dir = test::temp_dir();
    const std::string base = test::scenario("gpt3-175b-128xa3-mega.json");
    // One VM's 8 GPUs cannot hold GPT-3 175B's weights, gradients and optimizer state (175e9 x 16 B / 8 = 350 GB a GPU).
    test::write_file(dir + "/sweep.json", R"({"schema_version": 1, "name": "t", "scenario": ")" + base + R"(",
        "objective": "time", "axes": {"system": [{"machine_type": "a3-megagpu-8g", "nodes": 1},
                                                  {"machine_type": "a3-megagpu-8g", "nodes": 16}]}})");
    auto r = test::run_podsim("sweep " + dir + "/sweep.json --csv " + dir + "/out.csv --no-progress");
    REQUIRE(r.exit_code == 0);
    // RFC 4180 by hand: every record has the header's field count.
    std::ifstream in(dir + "/out.csv");
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    std::vector<std::vector<std::string>> rows(1);
    std::string field;
    bool quoted = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quoted) {
            if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') field += '"', ++i;
            else if (c == '"') quoted = false;
            else field += c;
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            rows.back().push_back(field), field.clear();
        } else if (c == '\n') {
            rows.back().push_back(field), field.clear(), rows.emplace_back();
        } else {
            field += c;
        }
    }
    if (rows.back().empty()) rows.pop_back();
    REQUIRE(rows.size() == 3);
    const auto& head = rows[0];
    for (const auto& row : rows) CHECK(row.size() == head.size());
    const size_t status = std::find(head.begin(), head.end(), "status") - head.begin();
    const size_t reason = std::find(head.begin(), head.end(), "reason") - head.begin();
    REQUIRE(status < head.size());
    REQUIRE(reason < head.size());
    CHECK(rows[1][status] == "infeasible");
    CHECK(rows[1][reason].find("memory") != std::string::npos);
    CHECK(rows[2][status] == "ok");
    // pandas (scripts/setup.sh installs python3-pandas): the default reader, no skipping of bad lines.
    const std::string py = "import pandas as p; d = p.read_csv('" + dir + "/out.csv'); "
                           "assert len(d) == 2, len(d); assert list(d['status']) == ['infeasible', 'ok']; "
                           "assert d['step_time_s'].isna().tolist() == [True, False]";
    // Debian's interpreter, where its python3-pandas package lives (a python3 earlier on PATH may be another one).
    const std::string python = std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
    CHECK(std::system((python + " -c \"" + py + "\"").c_str()) == 0);
}

TEST_CASE("context parallelism exports the K/V sharing podsim priced: Megatron-LM's --cp-comm-type, MaxText's "
          "context_parallel_strategy") {
    const Scenario g = load_scenario(test::scenario("gpt3-175b-128xa3-mega.json"), test::catalog());
    ParallelPlan q = g.plan;
    q.tp = 8, q.pp = 1, q.vpp = 1, q.cp = 2, q.dp = g.system.chips / 16;
    q.cp_algorithm = ParallelPlan::CpAlgorithm::ring;
    FrameworkSettings f = megatron_settings(g.system, g.model, q);
    REQUIRE(f.find("--cp-comm-type") != nullptr);
    CHECK(*f.find("--cp-comm-type") == "p2p");
    CHECK(megatron_violation(f, g.system, g.model) == "");
    q.cp_algorithm = ParallelPlan::CpAlgorithm::all_gather;
    CHECK(*megatron_settings(g.system, g.model, q).find("--cp-comm-type") == "allgather");
    q.cp = 1, q.dp = g.system.chips / 8;
    CHECK(megatron_settings(g.system, g.model, q).find("--cp-comm-type") == nullptr);

    const ModelSpec m = load_scenario(test::scenario("seed-1.2t-v4-2048.json"), test::catalog()).model;
    const SystemSpec sys = test::catalog().tpu_system("v6e-256", 1, "test", "$");
    ParallelPlan p;
    p.tp = 4, p.cp = 4, p.dp = 16, p.zero = 3, p.micro_batch = 1, p.global_batch = 64;
    p.cp_algorithm = ParallelPlan::CpAlgorithm::all_gather;
    f = maxtext_settings(sys, m, p);
    INFO(f.line());
    REQUIRE(f.find("context_parallel_strategy") != nullptr);
    CHECK(*f.find("context_parallel_strategy") == "all_gather");
    CHECK(f.find("use_tokamax_splash") == nullptr);
    CHECK(maxtext_violation(f, sys, m, p.global_batch) == "");
    p.cp_algorithm = ParallelPlan::CpAlgorithm::ring;
    f = maxtext_settings(sys, m, p);
    CHECK(*f.find("context_parallel_strategy") == "ring");
    CHECK(maxtext_violation(f, sys, m, p.global_batch) == "");  // with the Tokamax splash kernel it needs
}

TEST_CASE("a MaxText export states the grouped matmul's row tiles podsim priced, where they are not base.yml's 512") {
    const ModelSpec m = load_scenario(test::scenario("deepseek-v3-671b-2048xh800.json"), test::catalog()).model;
    REQUIRE(m.moe.enabled());
    const SystemSpec sys = test::catalog().tpu_system("v5p-1024", 1, "test", "$");
    ParallelPlan p;
    p.dp = 512, p.zero = 3, p.micro_batch = 1, p.global_batch = 512;
    p.gmm_row_tiles = GroupedGemmTiles::all(512);
    FrameworkSettings f = maxtext_settings(sys, m, p);
    CHECK(f.find("wi_tile_fwd_batch_seq") == nullptr);  // base.yml's own
    p.gmm_row_tiles.up[0] = 256, p.gmm_row_tiles.down[2] = 1024;
    f = maxtext_settings(sys, m, p);
    INFO(f.line());
    REQUIRE(f.find("wi_tile_fwd_batch_seq") != nullptr);
    CHECK(*f.find("wi_tile_fwd_batch_seq") == "256");
    CHECK(*f.find("wo_tile_drhs_batch_seq") == "1024");
    CHECK(*f.find("wi_tile_dlhs_batch_seq") == "512");
    CHECK(maxtext_violation(f, sys, m, p.global_batch) == "");
    p.gmm_row_tiles.up[0] = 200;  // not whole MXU blocks: the rule catches it
    CHECK(maxtext_violation(maxtext_settings(sys, m, p), sys, m, p.global_batch).find("wi_tile_fwd_batch_seq") !=
          std::string::npos);
    p.gmm_row_tiles = GroupedGemmTiles::all(0);  // a GPU stack's per-expert GEMMs: no MaxText switch, a note
    f = maxtext_settings(sys, m, p);
    CHECK(f.find("wi_tile_fwd_batch_seq") == nullptr);
    CHECK(std::any_of(f.notes.begin(), f.notes.end(),
                      [](const std::string& n) { return n.find("one GEMM per expert") != std::string::npos; }));
    // podsim's own blockers: whole 128-row blocks, and every tile dividing the padded rows (1 sequence x 4096
    // tokens x top-8 = 32,768 rows a device here: 384 does not divide it).
    p.gmm_row_tiles = GroupedGemmTiles::all(512);
    p.gmm_row_tiles.down[1] = 200;
    CHECK_FALSE(maxtext_settings(sys, m, p).blockers.empty());
    p.gmm_row_tiles.down[1] = 384;
    f = maxtext_settings(sys, m, p);
    CHECK(std::any_of(f.blockers.begin(), f.blockers.end(),
                      [](const std::string& b) { return b.find("wo_tile_dlhs_batch_seq=384") != std::string::npos; }));

    // A TPU7x chip is two JAX devices: per_device_batch_size counts TensorCores.
    const SystemSpec ironwood = test::catalog().tpu_system("tpu7x-512", 1, "test", "$");
    ParallelPlan q;
    q.dp = ironwood.chips, q.zero = 3, q.micro_batch = 4, q.global_batch = 4LL * ironwood.chips;
    f = maxtext_settings(ironwood, m, q);
    CHECK(*f.find("per_device_batch_size") == "2");
    CHECK(*f.find("ici_fsdp_parallelism") == std::to_string(2 * ironwood.chips));  // every TensorCore
    CHECK(maxtext_violation(f, ironwood, m, q.global_batch) == "");
}
