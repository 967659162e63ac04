// Reads the published-run format of shared/validation (README there) into model + system + plan, filling what a
// source leaves unstated with the framework's documented default (each default is listed in `assumptions`).
#pragma once
#include <string>
#include <vector>

#include "hardware/catalog.hpp"
#include "models/plan.hpp"
#include "models/transformer.hpp"

namespace podsim {

struct PublishedRun {
    std::string id;
    ModelSpec model;
    SystemSpec system;
    ParallelPlan plan;
    double published_step_time_s = 0;
    double published_params_b = 0;
    std::vector<std::string> assumptions;
};

std::vector<PublishedRun> load_published_runs(const std::string& file, const Catalog& cat);

}  // namespace podsim
