// Reads the published-run format of shared/validation (README there) into model + system + plan, filling what a
// source leaves unstated with the framework's documented default (each default is listed in `assumptions`).
#pragma once
#include <string>
#include <vector>

#include "hardware/catalog.hpp"
#include "models/plan.hpp"
#include "models/step.hpp"
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

// Simulates a published run. The run happened, so a plan our memory model says cannot fit is taken to have
// recomputed more than it stated (XLA rematerializes to fit; Megatron users switch to full recomputation):
// the recompute mode is raised step by step until the plan fits, and the change is noted in `escalation`.
struct PublishedPrediction {
    StepResult step;
    ParallelPlan plan;        // as simulated
    std::string escalation;   // empty when the stated plan fit
};
PublishedPrediction simulate_published(const PublishedRun& run, const StepOptions& opt);

}  // namespace podsim
