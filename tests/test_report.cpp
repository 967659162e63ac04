// podsim report: the files it writes, what they contain, and that the HTML renders its charts in a real browser.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "helpers.hpp"
#include "models/scenario.hpp"
#include "models/step.hpp"
#include "reports/trace.hpp"

using namespace podsim;

namespace {

std::string slurp(const std::string& path) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

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

    // The trace: one complete event per simulated task of the scenario's step, on named processes and threads.
    const auto trace = nlohmann::json::parse(slurp(dir + "/trace.json"));
    const Scenario sc = load_scenario(test::scenario("gpt3-175b-128xa3-mega.json"), test::catalog());
    const StepResult step = simulate_step(sc.model, sc.system, sc.plan);
    size_t complete = 0, names = 0;
    double last_end_us = 0;
    bool durations_ok = true;
    for (const auto& e : trace["traceEvents"]) {
        if (e["ph"] == "X") {
            ++complete;
            durations_ok = durations_ok && e["dur"].get<double>() >= 0;
            last_end_us = std::max(last_end_us, e["ts"].get<double>() + e["dur"].get<double>());
        }
        if (e["ph"] == "M" && e["name"] == "thread_name") ++names;
    }
    CHECK(durations_ok);
    CHECK(complete == step.simulated_tasks);
    CHECK(names >= static_cast<size_t>(sc.plan.pp) * 2);
    CHECK(last_end_us == test::approx(step.step_time_s * 1e6).epsilon(1e-9));
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
    CHECK(dom.find("charts rendered: 6 of 6") != std::string::npos);
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
