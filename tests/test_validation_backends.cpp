// The two network backends on every shipped scenario: the closed form the planner ranks plans by against SimGrid,
// which lowers every instance of every collective to flows on the topology graph and shares links max-min (issue
// #16: within 5%). A gap here means the planner ranks on a figure the flow model does not back: the multi-ring's
// lanes over uneven torus axes, a strided pair's routes, a hot NIC on an NVL72 rack were each found this way.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

#include "helpers.hpp"

using podsim::Json;
using namespace podsim::test;

TEST_CASE("every shipped scenario: the analytical step within 5% of the SimGrid step") {
    int scenarios = 0;
    for (const auto& entry : std::filesystem::directory_iterator(PODSIM_SCENARIO_DIR)) {
        if (entry.path().extension() != ".json") continue;
        const std::string file = entry.path().string();
        CAPTURE(file);
        const auto an = run_podsim("run " + file + " --format json");
        const auto sg = run_podsim("run " + file + " --format json --network simgrid");
        REQUIRE(an.exit_code == 0);
        REQUIRE(sg.exit_code == 0);
        const double a = Json::parse(an.out).at("step_time_s").get<double>();
        const double s = Json::parse(sg.out).at("step_time_s").get<double>();
        CHECK(Json::parse(sg.out).at("network_backend").get<std::string>().rfind("simgrid", 0) == 0);
        CHECK_MESSAGE(std::fabs(a / s - 1) <= 0.05, "analytical " << a << " s, SimGrid " << s << " s");
        ++scenarios;
    }
    CHECK(scenarios >= 15);
}
