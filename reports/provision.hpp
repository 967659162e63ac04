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

struct Provisioning {
    std::vector<std::string> commands;  // shell lines (gcloud), with $PROJECT / $ZONE left to the user
    std::vector<std::string> notes;     // what the commands do not cover
    std::string framework;              // "Megatron-LM" or "MaxText"
    std::string launch_flags;           // the plan as that framework's options
};

Provisioning provisioning_for(const std::string& name, const SystemSpec& sys, const ModelSpec& m,
                              const ParallelPlan& p, PriceOption price, const std::string& region);

}  // namespace podsim
