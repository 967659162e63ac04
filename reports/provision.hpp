// What to type to get the machines and start the job: gcloud commands for the system (TPU queued resources, or
// GPU VMs in a compact placement) under a purchase option, and the framework's parallelism flags for the plan.
#pragma once
#include <string>
#include <vector>

#include "hardware/price.hpp"
#include "hardware/system.hpp"
#include "models/plan.hpp"
#include "models/transformer.hpp"

namespace podsim {

// The plan as one framework's settings: MaxText config overrides (key=value) or Megatron-LM arguments (--flag
// value, value empty for a switch), in the order printed. `blockers` says why the framework cannot run the plan as
// podsim priced it (a rule of the framework the plan breaks); empty when the settings are runnable.
struct FrameworkSettings {
    std::string framework;  // "MaxText" or "Megatron-LM"
    std::vector<std::pair<std::string, std::string>> settings;
    std::vector<std::string> notes;     // where the settings approximate the plan
    std::vector<std::string> blockers;
    std::string line() const;           // "k=v k=v" (MaxText) or "--flag v --switch" (Megatron-LM)
    const std::string* find(const std::string& key) const;
};

// MaxText (src/maxtext/configs/types.py, base.yml): ICI axes multiply to the chips of one slice, DCN axes to the
// slices; the plan's groups are split between the two as podsim placed them (placement/).
FrameworkSettings maxtext_settings(const SystemSpec& sys, const ModelSpec& m, const ParallelPlan& p);
// Megatron-LM (megatron/training/arguments.py).
FrameworkSettings megatron_settings(const SystemSpec& sys, const ModelSpec& m, const ParallelPlan& p);

struct Provisioning {
    // A shell script, one line each: gcloud commands for the system. The values only the user knows (project,
    // zone, image) are shell variables that must be set first (`: "${ZONE:?...}"` stops with a message otherwise).
    std::vector<std::string> commands;
    std::vector<std::string> notes;     // what the commands do not cover
    FrameworkSettings settings;
    std::string framework;              // settings.framework
    std::string launch_flags;           // settings.line()
};

// Cloud TPU's accelerator type for one slice of the system ("v5litepod-256", "v4-2048": the catalog's type prefix
// and its count convention, whatever name the scenario used).
std::string cloud_accelerator_type(const SystemSpec& sys);

Provisioning provisioning_for(const std::string& name, const SystemSpec& sys, const ModelSpec& m,
                              const ParallelPlan& p, PriceOption price, const std::string& region);

}  // namespace podsim
