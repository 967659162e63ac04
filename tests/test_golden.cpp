// Golden outputs (issue #11, part 6; ctest label `golden`): every shipped input through the command a user runs on
// it, with JSON output, compared against a checked-in expected file tests/golden/<kind>/<name>.json:
//
//   kind      input                                            command (run in the source root, relative paths)
//   run       scenarios/*.json                                 podsim run F --format json
//   stages    scenarios/*.json                                 podsim run F --stages (op list, StepCosts, graph size)
//   sweep     scenarios/sweeps/*.json                          podsim sweep F --json OUT --no-progress
//   check     scenarios/claims/*.json                          podsim check F --format json
//   validate  scenarios/validation/*.json                      podsim validate F --format json
//   validate  ../shared/validation/published_runs.json         podsim validate F --format json (skipped if absent)
//
// All use the default analytical network backend and the default budgets; each runs in well under 10 s on a 2-core
// machine. The comparison: the same JSON structure and keys, strings equal, booleans and nulls equal, numbers within
// 0.1% relative (1e-12 absolute near zero; percentage errors within 0.1 percentage points: kPercentErrorKeys); a
// decimal number printed inside a string within 0.1% or one unit of its last printed digit (integers inside strings,
// such as plan splits and chip counts, must be equal). Wall-clock fields are dropped before comparing and before
// writing (kVolatileKeys), and the absolute path of the source tree (compiled into podsim as its catalog directory)
// is written "<source>" so that the files are the same from any checkout. On a mismatch the JSON path, the expected
// and the actual value are printed.
//
// UPDATING: `PODSIM_UPDATE_GOLDEN=1 ctest --test-dir build -L golden` (or the same variable on
// `build/podsim_tests --source-file='*/tests/test_golden*.cpp'`) writes the expected files from this build instead of
// comparing. An intended change updates the golden file in the same commit with a one-line reason in the commit
// message. A new shipped input needs its golden file (the coverage test fails without one); a new directory of
// inputs under scenarios/ needs a line in golden_cases() saying which command it is for.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "tests/helpers.hpp"

namespace fs = std::filesystem;
using podsim::Json;
using namespace podsim::test;

namespace {

// ---------------------------------------------------------------------------------------------------------------
// What is not compared.

// Volatile keys, dropped at any depth from the actual output (before it is compared or written) and from the expected
// file: wall-clock figures, which differ from run to run (tests/test_determinism.cpp blanks the same ones).
const std::set<std::string> kVolatileKeys = {
    "plans_per_s",  // search/sweep: closed-form screening speed (plans per wall-clock second)
    "screen_s",     // search/sweep: wall-clock seconds the screening took
    "elapsed_s",    // calibrate: wall-clock seconds of the run (no golden input calibrates; listed for when one does)
};
// Absolute paths are not volatile across runs but differ between checkouts: podsim runs in the source root with relative
// input paths, so the scenario and claim paths it prints are relative, and the one absolute path left (the catalog
// directory compiled into podsim: "reliability_source", "efficiency_source") has the source root replaced by this.
const std::string kSourceToken = "<source>";
const std::string kTempToken = "<tmp>";  // the test's temporary directory, were it ever printed (it is not today)

// A percentage error is the difference of two quantities: 0.1% of the predicted step time moves it by 0.1 percentage
// points, whatever its own size, so these keys are compared in absolute percentage points, not relatively.
const std::set<std::string> kPercentErrorKeys = {"error_pct", "mape_pct", "max_error_pct"};
constexpr double kRelTol = 1e-3;        // 0.1%
constexpr double kAbsTol = 1e-12;       // near zero
constexpr double kPercentPointTol = 0.1;  // kPercentErrorKeys

// ---------------------------------------------------------------------------------------------------------------
// The comparator.

bool numbers_close(double e, double a, double abs_tol = kAbsTol) {
    if (e == a) return true;
    if (!std::isfinite(e) || !std::isfinite(a)) return false;
    const double d = std::fabs(a - e);
    return d <= abs_tol || d <= kRelTol * std::fabs(e);
}

std::string show(const Json& v) {
    std::string s = v.dump();
    return s.size() > 200 ? s.substr(0, 200) + "..." : s;
}

// A decimal number inside a string: a sign, digits with an optional point, an optional exponent.
const std::regex kNumberInText(R"([-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)");

struct TextToken {
    bool number;
    std::string text;
};
std::vector<TextToken> tokenize(const std::string& s) {
    std::vector<TextToken> out;
    size_t pos = 0;
    for (auto it = std::sregex_iterator(s.begin(), s.end(), kNumberInText); it != std::sregex_iterator(); ++it) {
        const size_t at = static_cast<size_t>(it->position());
        if (at > pos) out.push_back({false, s.substr(pos, at - pos)});
        out.push_back({true, it->str()});
        pos = at + it->length();
    }
    if (pos < s.size()) out.push_back({false, s.substr(pos)});
    return out;
}
bool is_decimal(const std::string& t) { return t.find_first_of(".eE") != std::string::npos; }
// One unit of the last printed digit: "69.5" -> 0.1, "4.47e+10" -> 1e8, "0.037" -> 0.001.
double last_digit_unit(const std::string& t) {
    const size_t e = t.find_first_of("eE");
    const std::string mant = t.substr(0, e);
    const int exp10 = e == std::string::npos ? 0 : std::stoi(t.substr(e + 1));
    const size_t dot = mant.find('.');
    const int decimals = dot == std::string::npos ? 0 : static_cast<int>(mant.size() - dot - 1);
    return std::pow(10.0, exp10 - decimals);
}
// Strings: the text between numbers equal; integers equal (plan splits, chip counts, machine and chip names: "tp 32",
// "v4-2048", "a3-megagpu-8g"); decimals within 0.1% or one unit of their last printed digit (a rounded rendering of a
// value that moved 0.01% can flip its last digit).
bool strings_close(const std::string& e, const std::string& a) {
    if (e == a) return true;
    const auto te = tokenize(e), ta = tokenize(a);
    if (te.size() != ta.size()) return false;
    for (size_t i = 0; i < te.size(); ++i) {
        if (te[i].number != ta[i].number) return false;
        if (!te[i].number || !is_decimal(te[i].text) || !is_decimal(ta[i].text)) {
            if (te[i].text != ta[i].text) return false;
            continue;
        }
        double x = 0, y = 0;
        try {
            x = std::stod(te[i].text), y = std::stod(ta[i].text);
        } catch (const std::exception&) {
            return false;
        }
        if (!numbers_close(x, y) && std::fabs(x - y) > last_digit_unit(te[i].text) * (1 + 1e-9)) return false;
    }
    return true;
}

void compare_at(const Json& e, const Json& a, const std::string& path, const std::string& key,
                std::vector<std::string>& diffs) {
    auto differ = [&](const std::string& what) {
        diffs.push_back(path + ": " + what + ": expected " + show(e) + ", actual " + show(a));
    };
    if (e.is_number() && a.is_number()) {
        const double x = e.get<double>(), y = a.get<double>();
        const bool ok = kPercentErrorKeys.count(key) ? std::fabs(x - y) <= kPercentPointTol : numbers_close(x, y);
        if (!ok) {
            std::ostringstream rel;
            rel.precision(3);
            if (x != 0) rel << " (" << std::showpos << 100 * (y - x) / std::fabs(x) << "%)";
            diffs.push_back(path + ": number differs: expected " + show(e) + ", actual " + show(a) + rel.str());
        }
        return;
    }
    if (e.type() != a.type()) return differ(std::string("type ") + a.type_name() + " instead of " + e.type_name());
    if (e.is_object()) {
        for (const auto& [k, v] : e.items()) {
            if (!a.contains(k)) diffs.push_back(path + "." + k + ": missing from the actual output (expected " + show(v) + ")");
            else compare_at(v, a.at(k), path + "." + k, k, diffs);
        }
        for (const auto& [k, v] : a.items())
            if (!e.contains(k)) diffs.push_back(path + "." + k + ": not in the golden file (actual " + show(v) + ")");
    } else if (e.is_array()) {
        if (e.size() != a.size())
            diffs.push_back(path + ": " + std::to_string(a.size()) + " elements instead of " + std::to_string(e.size()));
        for (size_t i = 0; i < std::min(e.size(), a.size()); ++i)
            compare_at(e[i], a[i], path + "[" + std::to_string(i) + "]", key, diffs);
    } else if (e.is_string()) {
        if (!strings_close(e.get<std::string>(), a.get<std::string>())) differ("string differs");
    } else if (e != a) {
        differ("value differs");
    }
}

// Every difference between an expected and an actual output, one line each ("$.a.b[2]: ...: expected X, actual Y").
std::vector<std::string> compare_json(const Json& expected, const Json& actual) {
    std::vector<std::string> diffs;
    compare_at(expected, actual, "$", "", diffs);
    return diffs;
}

// ---------------------------------------------------------------------------------------------------------------
// Normalizing an output: volatile keys dropped, the checkout's absolute paths replaced.

void replace_all(std::string& s, const std::string& from, const std::string& to) {
    if (from.empty()) return;
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
}

fs::path source_root() { return fs::path(PODSIM_SCENARIO_DIR).lexically_normal().parent_path(); }

void normalize(Json& j) {
    if (j.is_object()) {
        for (const auto& k : kVolatileKeys) j.erase(k);
        for (auto& [k, v] : j.items()) normalize(v);
    } else if (j.is_array()) {
        for (auto& v : j) normalize(v);
    } else if (j.is_string()) {
        std::string s = j.get<std::string>();
        replace_all(s, source_root().string(), kSourceToken);
        replace_all(s, temp_dir(), kTempToken);
        j = s;
    }
}

// ---------------------------------------------------------------------------------------------------------------
// The shipped inputs and their commands.

struct GoldenCase {
    std::string kind;    // tests/golden/<kind>/
    std::string name;    // the input's stem: tests/golden/<kind>/<name>.json
    std::string input;   // relative to the source root, as a user there types it
    std::string args;    // podsim's arguments (relative paths; podsim runs in the source root)
    std::string out_file;  // where the JSON goes: "" = stdout, else a file podsim writes (sweep --json)
};

fs::path golden_dir() { return source_root() / "tests" / "golden"; }
fs::path golden_file(const GoldenCase& c) { return golden_dir() / c.kind / (c.name + ".json"); }

std::vector<fs::path> json_files(const fs::path& dir) {
    std::vector<fs::path> v;
    if (!fs::is_directory(dir)) return v;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.is_regular_file() && e.path().extension() == ".json") v.push_back(e.path());
    std::sort(v.begin(), v.end());
    return v;
}

std::string rel(const fs::path& p) { return p.lexically_normal().lexically_relative(source_root()).string(); }

const fs::path kSharedRuns = fs::path(PODSIM_SHARED_DIR) / "validation" / "published_runs.json";

// Every shipped input with its command. `unclassified` gets the JSON files under scenarios/ that no line here covers.
std::vector<GoldenCase> golden_cases(std::vector<std::string>* unclassified = nullptr) {
    const fs::path sc(PODSIM_SCENARIO_DIR);
    std::vector<GoldenCase> v;
    std::set<fs::path> covered;
    auto add = [&](const std::string& kind, const fs::path& dir, const std::string& cmd, const std::string& tail,
                   bool json_to_file = false) {
        for (const auto& f : json_files(dir)) {
            GoldenCase c{kind, f.stem().string(), rel(f), "", ""};
            if (json_to_file) c.out_file = temp_dir() + "/golden-" + kind + "-" + c.name + ".json";
            c.args = cmd + " " + c.input + (json_to_file ? " --json " + c.out_file : "") + tail;
            v.push_back(c);
            covered.insert(f.lexically_normal());
        }
    };
    add("run", sc, "run", " --format json");
    add("stages", sc, "run", " --stages");
    add("sweep", sc / "sweeps", "sweep", " --no-progress", true);
    add("check", sc / "claims", "check", " --format json");
    add("validate", sc / "validation", "validate", " --format json");
    if (fs::exists(kSharedRuns)) {
        const std::string in = rel(kSharedRuns);
        v.push_back({"validate", kSharedRuns.stem().string(), in, "validate " + in + " --format json", ""});
    }
    if (unclassified)
        for (const auto& e : fs::recursive_directory_iterator(sc))
            if (e.is_regular_file() && e.path().extension() == ".json" && !covered.count(e.path().lexically_normal()))
                unclassified->push_back(rel(e.path()));
    return v;
}

struct Outcome {
    int exit_code = -1;
    std::string json_text, err;
};

// Runs every case's podsim, a few at a time (one per core, at most 4), each in the source root with PODSIM_CATALOG
// unset (the compiled-in catalog). Only processes run on the worker threads; all checks are made by the caller.
std::vector<Outcome> run_all(const std::vector<GoldenCase>& cases) {
    std::vector<Outcome> out(cases.size());
    // Longest first (the sweep searches 18 points), so that the short ones fill in beside it.
    std::vector<size_t> order(cases.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_partition(order.begin(), order.end(), [&](size_t i) { return cases[i].kind == "sweep"; });
    std::atomic<size_t> next{0};
    auto worker = [&] {
        for (size_t k; (k = next++) < order.size();) {
            const size_t i = order[k];
            const GoldenCase& c = cases[i];
            const std::string base = temp_dir() + "/golden-" + c.kind + "-" + c.name;
            if (!c.out_file.empty()) fs::remove(c.out_file);
            const std::string cmd = "cd '" + source_root().string() + "' && env -u PODSIM_CATALOG '" + PODSIM_BINARY +
                                    "' " + c.args + " >'" + base + ".out' 2>'" + base + ".err' </dev/null";
            const int status = std::system(cmd.c_str());
            out[i].exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
            out[i].json_text = slurp(c.out_file.empty() ? base + ".out" : c.out_file);
            out[i].err = slurp(base + ".err");
        }
    };
    const size_t n = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 4);
    std::vector<std::thread> pool;
    for (size_t t = 0; t < n; ++t) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
    return out;
}

// "/cost/options/spot/usd_total" -> "$.cost.options.spot.usd_total"; "/a/0" -> "$.a[0]" (the comparator's paths).
std::string pointer_to_path(const std::string& pointer) {
    std::string path = "$";
    std::stringstream ss(pointer);
    std::string part;
    std::getline(ss, part, '/');  // the empty text before the first '/'
    while (std::getline(ss, part, '/'))
        path += !part.empty() && std::all_of(part.begin(), part.end(), ::isdigit) ? "[" + part + "]" : "." + part;
    return path;
}

bool updating() {
    const char* v = std::getenv("PODSIM_UPDATE_GOLDEN");
    return v && *v && std::string(v) != "0";
}

}  // namespace

TEST_CASE("golden: every shipped scenario, sweep, claim and published-run file gives its checked-in output") {
    if (!fs::exists(kSharedRuns))
        MESSAGE("skipped: " << kSharedRuns.string() << " is absent (the shared validation set is not checked out)");
    const auto cases = golden_cases();
    REQUIRE(cases.size() >= 13);  // 10 scenarios, a sweep, a claim, the MoE runs (+ the shared published runs)
    const auto outcomes = run_all(cases);
    const bool update = updating();
    size_t written = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
        const GoldenCase& c = cases[i];
        const Outcome& o = outcomes[i];
        INFO("podsim " << c.args << "  (in " << source_root().string() << ")");
        INFO("golden file: " << golden_file(c).string());
        INFO("stderr: " << o.err);
        REQUIRE(o.exit_code == 0);
        Json actual;
        try {
            actual = Json::parse(o.json_text);
        } catch (const std::exception& e) {
            FAIL("the output is not JSON: " << e.what() << "\n" << o.json_text.substr(0, 500));
        }
        normalize(actual);
        if (update) {
            fs::create_directories(golden_file(c).parent_path());
            std::ofstream(golden_file(c)) << actual.dump(2) << "\n";
            ++written;
            continue;
        }
        if (!fs::exists(golden_file(c))) {
            FAIL_CHECK("no golden file: run the golden tier with PODSIM_UPDATE_GOLDEN=1 to write it, check it, commit it");
            continue;
        }
        Json expected = Json::parse(slurp(golden_file(c).string()));
        normalize(expected);
        const auto diffs = compare_json(expected, actual);
        if (!diffs.empty()) {
            std::string shown;
            for (size_t k = 0; k < std::min<size_t>(diffs.size(), 25); ++k) shown += "\n  " + diffs[k];
            if (diffs.size() > 25) shown += "\n  ... and " + std::to_string(diffs.size() - 25) + " more";
            FAIL_CHECK(diffs.size() << " difference(s) from the golden file (an intended change: rerun with "
                                       "PODSIM_UPDATE_GOLDEN=1 and give the reason in the commit message):"
                                    << shown);
        }
    }
    if (update) MESSAGE("PODSIM_UPDATE_GOLDEN: wrote " << written << " golden files under " << golden_dir().string());
}

TEST_CASE("golden: every shipped input has a golden file, and every golden file a shipped input") {
    std::vector<std::string> unclassified;
    const auto cases = golden_cases(&unclassified);
    // A JSON file under scenarios/ that no line of golden_cases() runs: say which command it is for.
    CHECK_MESSAGE(unclassified.empty(), "inputs with no golden command: " << [&] {
        std::string s;
        for (const auto& u : unclassified) s += " " + u;
        return s;
    }());
    std::set<fs::path> expected_files;
    for (const auto& c : cases) {
        CAPTURE(c.input);
        CHECK_MESSAGE(expected_files.insert(golden_file(c)).second, "two inputs share the golden file " << golden_file(c));
        CHECK_MESSAGE(fs::exists(golden_file(c)), "no golden file " << golden_file(c).string()
                                                   << ": run the golden tier with PODSIM_UPDATE_GOLDEN=1");
    }
    // Every shipped scenario is among them (the 10 of today at least), with the sweep, the claim and the MoE runs.
    size_t runs = 0;
    for (const auto& c : cases) runs += c.kind == "run";
    CHECK(runs >= 10);
    CHECK(std::count_if(cases.begin(), cases.end(), [](const GoldenCase& c) { return c.kind == "stages"; }) == runs);
    CHECK(std::count_if(cases.begin(), cases.end(), [](const GoldenCase& c) { return c.kind == "sweep"; }) >= 1);
    CHECK(std::count_if(cases.begin(), cases.end(), [](const GoldenCase& c) { return c.kind == "check"; }) >= 1);
    CHECK(std::count_if(cases.begin(), cases.end(), [](const GoldenCase& c) { return c.kind == "validate"; }) >= 1);
    // A golden file whose input is gone (renamed, removed) is stale.
    if (fs::is_directory(golden_dir()))
        for (const auto& e : fs::recursive_directory_iterator(golden_dir()))
            if (e.is_regular_file()) {
                const bool shared_absent = !fs::exists(kSharedRuns) && e.path() == golden_dir() / "validate" / "published_runs.json";
                CHECK_MESSAGE((expected_files.count(e.path()) || shared_absent),
                              "stale golden file (no shipped input): " << e.path().string());
            }
}

TEST_CASE("golden: the comparator reports a 0.2% change at its JSON path and passes a 0.05% one") {
    const fs::path seed = golden_dir() / "run" / "seed-1.2t-v4-2048.json";
    REQUIRE_MESSAGE(fs::exists(seed), seed.string());
    const Json golden = Json::parse(slurp(seed.string()));
    CHECK(compare_json(golden, golden).empty());

    // Every non-zero number of the file, one at a time: +0.2% and -0.2% are reported at exactly that path; +-0.05% pass.
    size_t numbers = 0;
    const Json flat = golden.flatten();  // {"/json/pointer": leaf value}
    for (const auto& item : flat.items()) {
        // (Named copies, not structured bindings: clang 14 cannot capture those in CAPTURE's lambda.)
        const std::string ptr_text = item.key();
        const Json& value = item.value();
        if (!value.is_number() || value.get<double>() == 0) continue;
        ++numbers;
        const Json::json_pointer ptr(ptr_text);
        CAPTURE(ptr_text);
        for (double f : {1.002, 0.998}) {
            Json j = golden;
            j[ptr] = value.get<double>() * f;
            const auto d = compare_json(golden, j);
            REQUIRE(d.size() == 1);
            CHECK(d[0].rfind(pointer_to_path(ptr_text) + ": number differs", 0) == 0);
        }
        for (double f : {1.0005, 0.9995}) {
            Json j = golden;
            j[ptr] = value.get<double>() * f;
            CHECK(compare_json(golden, j).empty());
        }
    }
    CHECK(numbers >= 40);

    // Structure, strings and the rest.
    Json j = golden;
    j["cost"].erase("chip_hours");
    CHECK(compare_json(golden, j).size() == 1);
    j = golden, j["extra"] = 1;
    CHECK(compare_json(golden, j).size() == 1);
    j = golden, j["plan"]["schedule"] = "gpipe";
    CHECK(compare_json(golden, j).size() == 1);
    j = golden, j["feasible"] = false;
    CHECK(compare_json(golden, j).size() == 1);
    j = golden, j["step_time_s"] = std::to_string(golden["step_time_s"].get<double>());
    CHECK(compare_json(golden, j).size() == 1);  // a number become a string
    j = golden, j["infeasible_reasons"].push_back("x");
    CHECK(compare_json(golden, j).size() == 1);
    // Volatile keys are dropped by normalize(), on both sides.
    j = golden, j["plans_per_s"] = 1234.5, j["cost"]["screen_s"] = 0.5;
    normalize(j);
    CHECK(compare_json(golden, j).empty());

    // Numbers inside strings: decimals within 0.1% or a last-digit flip; integers exact.
    CHECK(strings_close("is 69.5% (52.5% model FLOPs), 1.32x", "is 69.6% (52.5% model FLOPs), 1.32x"));
    CHECK_FALSE(strings_close("is 69.5% (52.5% model FLOPs), 1.32x", "is 69.7% (52.5% model FLOPs), 1.32x"));
    CHECK(strings_close("trains 4.47e+10 tokens", "trains 4.48e+10 tokens"));
    CHECK_FALSE(strings_close("trains 4.47e+10 tokens", "trains 4.49e+10 tokens"));
    CHECK(strings_close("step 8.847613598842923 s", "step 8.8520 s"));
    CHECK_FALSE(strings_close("step 8.847613598842923 s", "step 8.8680 s"));
    CHECK_FALSE(strings_close("tp 32 pp 1 dp 32", "tp 32 pp 1 dp 33"));
    CHECK_FALSE(strings_close("128 x a3-megagpu-8g", "128 x a3-ultragpu-8g"));
    CHECK_FALSE(strings_close("v4-2048", "v4-2049"));
    CHECK_FALSE(strings_close("rc none", "rc full"));

    // Percentage errors: 0.1 percentage points.
    const Json v = {{"mape_pct", 6.5}, {"runs", {{{"error_pct", -0.83}}}}};
    Json w = v;
    w["runs"][0]["error_pct"] = -0.83 + 0.05, w["mape_pct"] = 6.5 - 0.05;
    CHECK(compare_json(v, w).empty());
    w["runs"][0]["error_pct"] = -0.83 + 0.2;
    CHECK(compare_json(v, w).size() == 1);
}
