// hardware/catalog/accuracy.json holds podsim's error on published runs, which reports show as the error band beside
// days and dollars. It is a measurement, so this test measures again: every set is re-validated with the current
// model and each figure (MAPE, worst error, per-chip MAPE and worst) must match within 0.3 percentage points. When the
// model changes, regenerate the file from `podsim validate FILE --format json` (README, Accuracy).
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <map>

#include "helpers.hpp"
#include "planner/accuracy.hpp"

using podsim::Json;
using namespace podsim::test;

TEST_CASE("the accuracy file is what podsim validate measures today") {
    const std::string catalog = std::filesystem::path(PODSIM_SCENARIO_DIR).parent_path().string() + "/hardware/catalog";
    const podsim::Accuracy acc = podsim::load_accuracy(catalog);
    const std::string root = std::filesystem::path(PODSIM_SCENARIO_DIR).lexically_normal().parent_path().string();
    constexpr double kTolPp = 0.3;
    for (const auto& set : acc.sets) {
        CAPTURE(set.id);
        const std::string file = set.file.rfind("../shared/", 0) == 0 ? shared(set.file.substr(10)) : root + "/" + set.file;
        if (!std::filesystem::exists(file)) {
            MESSAGE("skipped " << set.id << ": " << file << " is absent (../shared beside the checkout)");
            continue;
        }
        const auto r = run_podsim("validate " + file + " --format json");
        REQUIRE(r.exit_code == 0);
        const Json v = Json::parse(r.out);
        CHECK(v["predicted"].get<int>() == set.runs);
        CHECK(std::fabs(v["mape_pct"].get<double>() - set.mape_pct) <= kTolPp);
        CHECK(std::fabs(v["max_error_pct"].get<double>() - set.max_error_pct) <= kTolPp);
        std::map<std::string, std::vector<double>> by_chip;
        for (const auto& run : v["runs"])
            if (!run["error_pct"].is_null()) by_chip[run["system"]["chip"]].push_back(std::fabs(run["error_pct"].get<double>()));
        CHECK(by_chip.size() == set.by_chip.size());
        for (const auto& entry : by_chip) {  // (no structured binding: clang 14 cannot capture one in CHECK)
            const std::string& chip = entry.first;
            const std::vector<double>& errs = entry.second;
            CAPTURE(chip);
            REQUIRE(set.by_chip.count(chip) == 1);
            double sum = 0, worst = 0;
            for (double e : errs) sum += e, worst = std::max(worst, e);
            const auto& rec = set.by_chip.at(chip);
            CHECK(rec.runs == static_cast<int>(errs.size()));
            CHECK(std::fabs(sum / errs.size() - rec.mape_pct) <= kTolPp);
            CHECK(std::fabs(worst - rec.max_error_pct) <= kTolPp);
        }
    }
    // The band a report shows: a chip with three or more visible runs uses its own; one with three or more runs in a
    // held-out set its own error there; one with neither the held-out set's.
    const auto v4 = acc.band_for("tpu-v4", "TPU v4");
    CHECK(v4.typical_pct == acc.set("visible")->by_chip.at("tpu-v4").mape_pct);
    const auto ironwood = acc.band_for("tpu7x", "Ironwood");
    REQUIRE(acc.set("tpu_recipes") != nullptr);
    CHECK(ironwood.typical_pct == acc.set("tpu_recipes")->by_chip.at("tpu7x").mape_pct);
    CHECK(ironwood.basis.find("Ironwood runs held out from fitting") != std::string::npos);
    for (const auto& set : acc.sets) CHECK_MESSAGE(set.by_chip.count("b300") == 0, set.id);
    const auto none = acc.band_for("b300", "B300");
    CHECK(none.typical_pct == acc.set("held_out")->mape_pct);
    CHECK(none.basis.find("no published B300 run") != std::string::npos);
}
