// Training under failures: checkpoint size and time, the optimal checkpoint interval (Young 1974 / Daly 2006),
// goodput, and the time and dollars a token budget really takes once lost work and restarts are counted.
#pragma once
#include <string>

#include "models/scenario.hpp"

#include "hardware/system.hpp"
#include "models/step.hpp"
#include "models/transformer.hpp"

namespace podsim {

struct ReliabilityInputs {
    double interruptions_per_chip_hour = 0;
    double restart_overhead_s = 0;
    double spot_preemptions_per_node_hour = 0;
    double checkpoint_bandwidth_fraction = 0;
    std::string file;
};
ReliabilityInputs load_reliability(const std::string& catalog_dir);
// The catalog's figures with a scenario's own (its reliability block) in their place; `file` then names both.
ReliabilityInputs with_overrides(const ReliabilityInputs& catalog, const ReliabilityOverrides& o);

struct Goodput {
    double checkpoint_bytes = 0;      // weights + fp32 master + Adam moments, whole model
    double checkpoint_write_s = 0;    // all hosts writing their shards at once
    double mtbf_s = 0;                // of the whole job
    double interval_s = 0;            // Young/Daly optimum sqrt(2 delta M) (capped at M)
    double goodput = 1;               // useful fraction of wall time
    double effective_time_s = 0;      // to train the budget, failures included
};

// `extra_interruptions_per_hour`: e.g. spot preemptions of the whole job.
Goodput goodput_model(const ModelSpec& m, const SystemSpec& sys, const StepResult& step, double token_budget,
                      const ReliabilityInputs& rel, double extra_interruptions_per_hour = 0);

}  // namespace podsim
