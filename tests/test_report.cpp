// podsim report: the files it writes, what they contain, and that the HTML renders its charts in a real browser.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "helpers.hpp"
#include "models/scenario.hpp"
#include "models/step.hpp"
#include "planner/accuracy.hpp"
#include "reports/trace.hpp"

using namespace podsim;
using podsim::test::slurp;

namespace {

// Debian's chromium (scripts/setup.sh installs it); the flags a root, display-less CI machine needs.
std::string chromium() {
    for (const char* c : {"chromium", "chromium-browser", "google-chrome"})
        if (std::system((std::string("command -v ") + c + " >/dev/null 2>&1").c_str()) == 0) return c;
    return "";
}

std::string run(const std::string& cmd) {
    std::string out;
    if (FILE* p = popen(cmd.c_str(), "r")) {
        char buf[4096];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
        pclose(p);
    }
    return out;
}

}  // namespace

TEST_CASE("podsim report writes Markdown, self-contained HTML with six charts, SVG files and a Perfetto trace") {
    const std::string dir = test::temp_dir() + "/report";
    auto r = test::run_podsim("report " + test::scenario("gpt3-175b-128xa3-mega.json") + " --out " + dir + " --trace");
    REQUIRE(r.exit_code == 0);
    const std::string md = slurp(dir + "/report.md"), html = slurp(dir + "/report.html");
    for (const char* h : {"## Summary", "## Where the time goes", "## Strategies compared", "## Time vs cost, and scaling",
                          "## Cost and goodput per purchase option", "## Provisioning", "## Assumptions and sources"})
        CHECK(md.find(h) != std::string::npos);
    for (const char* id : {"breakdown", "timeline-scenario", "timeline-best", "strategies", "pareto", "scaling"}) {
        CAPTURE(id);
        CHECK(md.find(std::string("charts/") + id + ".svg") != std::string::npos);
        CHECK(slurp(dir + "/charts/" + id + ".svg").rfind("<svg", 0) == 0);
        CHECK(html.find(std::string("<svg id=\"") + id + "\" class=\"chart\"") != std::string::npos);
    }
    // Self-contained: nothing fetched from anywhere.
    CHECK(html.find("<link") == std::string::npos);
    CHECK(html.find("src=") == std::string::npos);
    CHECK(html.find("@import") == std::string::npos);
    // Provisioning for A3 Mega VMs and Megatron-LM flags of the best plan.
    CHECK(md.find("gcloud compute instances bulk create") != std::string::npos);
    CHECK(md.find("--machine-type=a3-megagpu-8g") != std::string::npos);
    CHECK(md.find("--count=128") != std::string::npos);
    CHECK(md.find("--tensor-model-parallel-size") != std::string::npos);

    // The default trace is the report's best plan, named in the trace and in the report.
    const auto best_trace = nlohmann::json::parse(slurp(dir + "/trace.json"));
    const std::string best_plan = best_trace["otherData"]["plan"].get<std::string>();
    CHECK(md.find("the best plan found: " + best_plan) != std::string::npos);
}

TEST_CASE("report --trace: every task, every layer, kernels and collectives with sizes, flow arrows between stages") {
    const std::string dir = test::temp_dir() + "/report";
    const std::string scen = test::scenario("gpt3-175b-128xa3-mega.json");
    auto r = test::run_podsim("report " + scen + " --out " + dir + " --top 2 --scales 1 --trace --plan scenario --no-progress");
    REQUIRE(r.exit_code == 0);
    const auto trace = nlohmann::json::parse(slurp(dir + "/trace.json"));
    const Scenario sc = load_scenario(scen, test::catalog());
    const StepResult step = simulate_step(sc.model, sc.system, sc.plan);
    const long long M = sc.plan.micro_batches();
    size_t tasks = 0, names = 0, flow_starts = 0, flow_ends = 0, collectives = 0;
    double last_end_us = 0;
    bool durations_ok = true;
    std::set<int> fwd_layers_mb0, bwd_layers_mb0;
    std::map<int, std::vector<std::pair<double, double>>> layer_spans;  // stage -> [start, end) of its layer events
    std::vector<nlohmann::json> kernels;
    std::set<std::pair<int, double>> compute_starts;  // (stage, ts) of every forward/backward task
    for (const auto& e : trace["traceEvents"]) {
        const std::string ph = e["ph"];
        if (ph == "M" && e["name"] == "thread_name") ++names;
        if (ph == "s") ++flow_starts;
        if (ph == "f") {
            ++flow_ends;
            CHECK(e["bp"] == "e");
        }
        if (ph != "X") continue;
        const std::string cat = e["cat"];
        const double ts = e["ts"], dur = e["dur"];
        durations_ok = durations_ok && dur >= 0;
        if (cat == "compute" || cat == "send_fwd" || cat == "send_bwd" || cat == "dp") {
            ++tasks;
            last_end_us = std::max(last_end_us, ts + dur);
            const std::string label = e["name"];
            if (cat == "compute" && (label[0] == 'F' || label[0] == 'B')) compute_starts.insert({e["pid"].get<int>(), ts});
        } else if (cat == "layer") {
            if (e["args"]["micro_batch"] == 0)
                (e["name"].get<std::string>().find("forward") != std::string::npos ? fwd_layers_mb0 : bwd_layers_mb0)
                    .insert(e["args"]["layer"].get<int>());
            layer_spans[e["pid"].get<int>()].push_back({ts, ts + dur});
        } else if (cat.rfind("collective", 0) == 0) {
            ++collectives;
            // Each collective says what it moves, over which group, with which algorithm.
            CHECK(e["args"]["bytes"].get<double>() > 0);
            CHECK(e["args"].contains("algorithm"));
            CHECK(e["args"]["group_size"].get<int>() > 1);
        } else {
            kernels.push_back(e);
        }
    }
    CHECK(durations_ok);
    CHECK(tasks == step.simulated_tasks);  // one event per simulated task, as before
    CHECK(names >= static_cast<size_t>(sc.plan.pp) * 3);
    CHECK(last_end_us == test::approx(step.step_time_s * 1e6).epsilon(1e-9));
    // Every model layer appears in micro-batch 0's forward and backward, numbered 0..L-1 across the stages.
    CHECK(fwd_layers_mb0.size() == static_cast<size_t>(sc.model.layers));
    CHECK(bwd_layers_mb0.size() == static_cast<size_t>(sc.model.layers));
    CHECK(*fwd_layers_mb0.rbegin() == sc.model.layers - 1);
    // Per-layer events for every pass: layers x micro-batches x 2 passes.
    CHECK(trace["otherData"]["layer_events"].get<long long>() == 2LL * sc.model.layers * M);
    // The TP collectives (sequence parallelism: all-gather and reduce-scatter) of the drawn layers.
    CHECK(collectives > 0);
    // Kernels sit inside a layer of their stage.
    REQUIRE(!kernels.empty());
    for (size_t i = 0; i < kernels.size(); i += 97) {
        const auto& k = kernels[i];
        const double a = k["ts"], b = a + k["dur"].get<double>();
        bool inside = false;
        for (const auto& [lo, hi] : layer_spans[k["pid"].get<int>()]) inside = inside || (a >= lo - 1e-3 && b <= hi + 1e-3);
        CHECK(inside);
    }
    // A flow arrow per send: (P - 1) stage boundaries x vpp chunks + (vpp - 1) wrap-arounds, per micro-batch and pass.
    const long long sends = 2LL * M * (static_cast<long long>(sc.plan.pp) * sc.plan.vpp - 1);
    CHECK(flow_starts == static_cast<size_t>(sends));
    CHECK(flow_ends == flow_starts);
    // Each arrow lands at the start of a forward/backward task on the receiving stage.
    for (const auto& e : trace["traceEvents"])
        if (e["ph"] == "f") CHECK(compute_starts.count({e["pid"].get<int>(), e["ts"].get<double>()}) == 1);

    // A plan written out is traced as given; a wrong one is a usage error naming the word.
    auto own = test::run_podsim("report " + scen + " --out " + dir + "2 --top 2 --scales 1 --trace --no-progress --plan "
                                "'tp 8 pp 8 (vpp 4) dp 16 sp mb 1 zero 1 rc selective bf16'");
    REQUIRE(own.exit_code == 0);
    const auto t2 = nlohmann::json::parse(slurp(dir + "2/trace.json"));
    CHECK(t2["otherData"]["plan"].get<std::string>().find("(vpp 4)") != std::string::npos);
    auto bad = test::run_podsim("report " + scen + " --out " + dir + "3 --trace --plan 'tp 8 pipes 2'");
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("unknown word \"pipes\"") != std::string::npos);
    CHECK(!std::filesystem::exists(dir + "3"));
}

TEST_CASE("the HTML report renders with its charts in headless Chromium") {
    const std::string browser = chromium();
    INFO("Debian's chromium package is needed (scripts/setup.sh installs it)");
    REQUIRE(!browser.empty());
    const std::string dir = test::temp_dir() + "/render";
    REQUIRE(test::run_podsim("report " + test::scenario("seed-1.2t-v4-2048.json") + " --out " + dir).exit_code == 0);
    const std::string flags =
        " --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run --disable-extensions "
        "--disable-background-networking --user-data-dir=" + dir + "/profile ";
    // The page's own check (getBBox of every chart, run by the browser's layout engine) read back from the DOM.
    const std::string dom = run("timeout 120 " + browser + flags + "--dump-dom file://" + dir + "/report.html 2>/dev/null");
    CHECK(dom.find("data-charts-rendered=\"6 of 6\"") != std::string::npos);
    // No label of any chart falls outside its chart (the browser's own text boxes, measured by the page's check).
    const auto clipped_at = dom.find("data-clipped-labels=\"");
    INFO("clipped labels: " << (clipped_at == std::string::npos ? "?" : dom.substr(clipped_at, 400)));
    CHECK(dom.find("data-labels-clipped=\"0\"") != std::string::npos);
    // A document for sharing: the decision first, no local path, no debug text.
    const std::string html = slurp(dir + "/report.html");
    const auto first_h2 = html.find("<h2>");
    REQUIRE(first_h2 != std::string::npos);
    CHECK(html.compare(first_h2, 17, "<h2>Decision</h2>") == 0);
    const std::string source_root = std::filesystem::path(PODSIM_SCENARIO_DIR).lexically_normal().parent_path().string();
    CHECK(html.find(source_root) == std::string::npos);
    CHECK(html.find(dir) == std::string::npos);
    CHECK(html.find("charts rendered") == std::string::npos);
    // And an actual raster of the page.
    run("timeout 120 " + browser + flags + "--hide-scrollbars --window-size=1100,3000 --screenshot=" + dir +
        "/page.png file://" + dir + "/report.html >/dev/null 2>&1");
    const std::string png = slurp(dir + "/page.png");
    REQUIRE(png.size() > 20000);
    CHECK(png.compare(1, 3, "PNG") == 0);
}

TEST_CASE("report: TPU provisioning, spot, and bad input writes nothing") {
    const std::string dir = test::temp_dir() + "/tpu";
    auto r = test::run_podsim("report " + test::scenario("seed-1.2t-v4-2048.json") + " --out " + dir + " --price spot");
    REQUIRE(r.exit_code == 0);
    const std::string md = slurp(dir + "/report.md");
    CHECK(md.find("gcloud compute tpus queued-resources create") != std::string::npos);
    CHECK(md.find("--accelerator-type=v4-2048 --runtime-version=tpu-ubuntu2204-base") != std::string::npos);
    CHECK(md.find("--spot") != std::string::npos);
    CHECK(md.find("ici_tensor_parallelism=") != std::string::npos);

    auto no_out = test::run_podsim("report " + test::scenario("seed-1.2t-v4-2048.json"));
    CHECK(no_out.exit_code == 2);
    CHECK(no_out.err.find("--out DIR") != std::string::npos);
    const std::string bad_dir = test::temp_dir() + "/bad";
    test::write_file(test::temp_dir() + "/bad.json", "{\"schema_version\": 1, \"name\": 3}");
    auto bad = test::run_podsim("report " + test::temp_dir() + "/bad.json --out " + bad_dir);
    CHECK(bad.exit_code == 1);
    CHECK(bad.err.find("bad.json: $.name") != std::string::npos);
    CHECK(!std::ifstream(bad_dir + "/report.html").good());
}

TEST_CASE("report opens with the decision: fastest, cheapest and what meets the brief, with podsim's error band") {
    const std::string dir = test::temp_dir() + "/decision";
    auto r = test::run_podsim("report " + test::scenario("seed-1.2t-v4-2048.json") + " --out " + dir +
                              " --scales 1,2 --top 2 --no-progress --deadline-days 400 --budget-usd 20M");
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const std::string md = slurp(dir + "/report.md");
    const auto first = md.find("\n## ");
    REQUIRE(first != std::string::npos);
    CHECK(md.compare(first, 13, "\n## Decision\n") == 0);
    CHECK(md.find("**Provision ") != std::string::npos);
    CHECK(md.find("cheapest within 400 days") != std::string::npos);
    CHECK(md.find("fastest within $20.00M") != std::string::npos);
    CHECK(md.find("| fastest |") != std::string::npos);
    // The band is the accuracy file's figure for the chip (TPU v4 has published runs in the visible set).
    const podsim::Accuracy acc =
        podsim::load_accuracy(std::filesystem::path(PODSIM_SCENARIO_DIR).parent_path().string() + "/hardware/catalog");
    CHECK(md.find(fmt::format("Error band: ±{:.1f}%", acc.set("visible")->by_chip.at("tpu-v4").mape_pct)) != std::string::npos);
    // No path of this machine in a document meant for sharing.
    const std::string root = std::filesystem::path(PODSIM_SCENARIO_DIR).lexically_normal().parent_path().string();
    CHECK(md.find(root) == std::string::npos);
    CHECK(md.find(test::temp_dir()) == std::string::npos);
    // Dollars as planners write them; a malformed amount is a usage error.
    auto bad = test::run_podsim("report " + test::scenario("seed-1.2t-v4-2048.json") + " --out " + dir + "2 --budget-usd 5X");
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("--budget-usd expects dollars") != std::string::npos);
}
