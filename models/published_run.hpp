// Reads the published-run format of shared/validation (README there) into model + system + plan. The framework is
// looked up in the software catalog (its behaviours are the stack's, with sources); settings a source leaves unstated
// (null or absent) stay free and are completed with the best feasible plan (plan_completion.hpp). Text fields are
// read only where they state a setting (precision, recompute mode or remat policy, zero_stage_text, arch).
#pragma once
#include <string>
#include <vector>

#include "hardware/catalog.hpp"
#include "models/plan.hpp"
#include "models/plan_completion.hpp"
#include "models/software_stack.hpp"
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
    SoftwareStack stack;          // the framework's entry in the software catalog (or unknown_stack)
    PlanFields free;              // settings the record does not publish: completed by simulate_published
    std::string error;            // non-empty: the record could not be read (file, JSON path and reason)
};

// Every record of the file; one that cannot be read is kept with `error` set (the file itself must be a non-empty
// array, else InputError).
std::vector<PublishedRun> load_published_runs(const std::string& file, const Catalog& cat);

// Simulates a published run. The run happened, so a plan our memory model says cannot fit is taken to have
// recomputed more than it stated (XLA rematerializes to fit; Megatron users switch to full recomputation):
// the recompute mode is raised step by step until the plan fits, and the change is noted in `escalation`.
struct PublishedPrediction {
    StepResult step;
    ParallelPlan plan;        // as simulated
    std::string escalation;   // empty when the stated plan fit
    std::vector<std::string> chosen;  // unpublished settings completed by the plan search: "batch.micro_batch = 2"
};
PublishedPrediction simulate_published(const PublishedRun& run, const StepOptions& opt);

}  // namespace podsim
