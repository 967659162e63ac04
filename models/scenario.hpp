// A what-if input: model, system, plan and training budget, read from a scenario JSON file.
#pragma once
#include <optional>
#include <string>

#include "hardware/catalog.hpp"
#include "models/evaluation.hpp"
#include "models/input_pipeline.hpp"
#include "models/plan.hpp"
#include "models/plan_completion.hpp"
#include "models/software_stack.hpp"
#include "models/transformer.hpp"

namespace podsim {

// What a buyer knows better than the catalog (issue #14): prices negotiated for the system's SKU (per the catalog's
// unit; options not given keep the catalog's list price) and failure rates observed on their own fleet (fields not
// given keep hardware/catalog/reliability.json's).
struct NegotiatedPrice {
    std::string sku, unit;  // the system's SKU and its unit ("chip_hour" TPU, "vm_hour" GPU)
    std::optional<double> usd[4];  // indexed by PriceOption
    std::string source;
};
// Where checkpoints go (issue #15): a storage of the catalog with its published caps, written synchronously (the
// job stops while it writes) or asynchronously (the job stops only to copy its shards to host memory; hosts drain
// them to storage while training goes on). Restores read from the same storage.
struct CheckpointSpec {
    StorageSpec storage;
    double capacity_tib = 0;
    bool async = false;
    double device_to_host_bytes_per_s = 0;  // per chip; async needs it (the scenario's, else none: an error)
    std::string source;
};
struct ReliabilityOverrides {
    std::optional<double> interruptions_per_chip_hour, restart_overhead_s, spot_preemptions_per_node_hour,
        checkpoint_bandwidth_fraction;
    // Per component (the block's "failures" object): per chip, host, scale-out link and slice hour, and software
    // failures per chip-hour.
    std::optional<double> chip_per_hour, host_per_hour, link_per_hour, slice_per_hour, software_per_chip_hour;
    std::optional<CheckpointSpec> checkpoint;  // the scenario's checkpoint block
    std::string source;
    bool any() const {
        return interruptions_per_chip_hour || restart_overhead_s || spot_preemptions_per_node_hour || chip_per_hour ||
               host_per_hour || link_per_hour || slice_per_hour || software_per_chip_hour ||
               checkpoint_bandwidth_fraction || checkpoint;
    }
};

struct Scenario {
    std::string file;
    std::string name;
    std::string description;
    ModelSpec model;
    SystemSpec system;
    ParallelPlan plan;
    double token_budget = 0;   // tokens to train; 0 = not given
    std::optional<EvaluationSpec> evaluation;  // training.evaluation: passes on the way, counted in time to train
    std::string region;        // pricing region; empty = the catalog's first entry for the SKU
    std::optional<NegotiatedPrice> negotiated;  // pricing.negotiated
    ReliabilityOverrides reliability;           // the scenario's reliability block
    std::optional<DataSpec> data;               // the input pipeline (data block): none = not modelled
    SoftwareStack stack;       // training.framework (default_scenario_stack() when not named)
    PlanFields free;           // plan fields the scenario left out, still to be completed (complete_scenario)
    std::vector<std::string> plan_choices;  // what the completion chose: "batch.micro_batch = 2", ...
};

Scenario scenario_from_json(const Json& j, const std::string& file, const Catalog& cat);
Scenario load_scenario(const std::string& file, const Catalog& cat);

// Completes the plan fields the scenario left out (plan_completion.hpp) and records the choices in plan_choices;
// a no-op when the plan is complete. Without a feasible plan, the fallback is kept and its reason added to the
// choices, so the simulation that follows reports why the plan is impossible.
void complete_scenario(Scenario& s, const CompletionOptions& opt = {});

}  // namespace podsim
