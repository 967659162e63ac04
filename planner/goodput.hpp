// Training under failures: checkpoint size and time, the optimal checkpoint interval (Young 1974 / Daly 2006),
// goodput, and the time and dollars a token budget really takes once lost work and restarts are counted.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "models/scenario.hpp"

#include "hardware/system.hpp"
#include "models/step.hpp"
#include "models/transformer.hpp"

namespace podsim {

// What fails, each with its own rate per unit-hour (hardware/catalog/reliability.json, from Llama 3's table of
// 419 interruptions): a chip (its package's NVLink/ICI links included), a host (CPU, memory, NIC, disk, power,
// maintenance), a scale-out link (a backend NIC port with its cable and switch: every GPU NIC, each TPU host's DCN
// NIC), a slice (a TPU slice or an NVLink domain larger than a node, as a whole), and software (per rank).
enum class FailureComponent { chip, host, link, slice, software };
inline constexpr FailureComponent kAllFailureComponents[] = {FailureComponent::chip, FailureComponent::host,
                                                             FailureComponent::link, FailureComponent::slice,
                                                             FailureComponent::software};
const char* to_string(FailureComponent c);

struct FailureRate {
    double per_unit_hour = 0;
    std::string source;
};

struct ReliabilityInputs {
    FailureRate failures[5];  // by FailureComponent
    // A scenario's one flat rate per chip-hour, in place of the components (its fleet's statistic).
    std::optional<double> flat_per_chip_hour;
    std::string flat_source;
    double restart_overhead_s = 0;
    double spot_preemptions_per_node_hour = 0;
    double checkpoint_bandwidth_fraction = 0;
    double replacement_wait_s = 0;  // waiting for a replacement host when no spare is held
    double spare_fraction = 0;      // hot spare hosts held, as a fraction of the job's hosts (at least one)
    std::optional<CheckpointSpec> checkpoint;  // a scenario's checkpoint storage (else: host NIC x the fraction)
    std::string file;
};
ReliabilityInputs load_reliability(const std::string& catalog_dir);
// The job's failures of one component: how many units it has and their failures per hour in all.
struct JobFailures {
    FailureComponent component = FailureComponent::chip;
    double units = 0;
    double per_unit_hour = 0;
    double per_hour = 0;  // units x per_unit_hour
    std::string source;
};
// Every component's part (the flat rate, where the scenario gives one, as the chips' part with the others at 0).
std::vector<JobFailures> job_failures(const SystemSpec& sys, const ReliabilityInputs& rel);
double job_failures_per_hour(const SystemSpec& sys, const ReliabilityInputs& rel);

// The catalog's figures with a scenario's own (its reliability block) in their place; `file` then names both.
ReliabilityInputs with_overrides(const ReliabilityInputs& catalog, const ReliabilityOverrides& o);

struct Goodput {
    double checkpoint_bytes = 0;      // weights + fp32 master + Adam moments, whole model
    double checkpoint_write_s = 0;    // all hosts writing their shards at once
    double checkpoint_blocking_s = 0; // how long each checkpoint stops training (= write, or the copy to host if async)
    double restore_s = 0;             // reading the checkpoint back after a failure
    std::string checkpoint_storage;   // where it goes, and the limit that binds: "host NIC x 0.5", "GCS (instance limit)"
    bool async = false;
    double mtbf_s = 0;                // of the whole job
    double interval_s = 0;            // Young/Daly optimum sqrt(2 delta M) (capped at M)
    double goodput = 1;               // useful fraction of wall time
    double effective_time_s = 0;      // to train the budget, failures included
};

// How a job recovers from a failure (issue #15), each with what a failure costs it:
//  restart     the catalog's restart: a replacement host within the restart overhead, restore from the checkpoint
//              storage, half an interval of work lost (the goodput above);
//  wait        the same, but the pool has no replacement ready: + replacement_wait_s of downtime per failure;
//  spares      hot spare hosts held for the whole run (spare_fraction of the hosts, at least one): the restart's
//              recovery is guaranteed, at the spares' price;
//  in-memory   checkpoints also replicated to a peer host's memory (GKE multi-tier checkpointing, Gemini-style):
//              frequent cheap checkpoints (the pause is the copy of a host's shard over its NIC), restore from the
//              peer at NIC speed, spares for the replacement;
//  elastic     continue without the replicas the failure took (restore from peers' memory), at (dp-k)/dp speed
//              until a replacement arrives after replacement_wait_s; no spares. A GPU failure takes its host's
//              replicas; a TPU failure takes its slice's (the slice's ICI torus is broken); a slice failure its
//              slice's; software failures none (restart in place). Needs dp >= 2 and a failure that leaves some.
// Spares are whole replacement units: a GPU host; on TPUs with optical circuit switches between 4x4x4 cubes (v4,
// v5p, Ironwood: wraparound "cube4") a cube of 64 chips, swapped in by the OCS; on other TPUs a whole slice.
struct RecoveryOption {
    std::string id, name;
    bool applicable = true;
    std::string why_not;
    double downtime_per_failure_s = 0, lost_work_per_failure_s = 0, checkpoint_pause_s = 0, interval_s = 0;
    double goodput = 0;
    double effective_time_s = 0;
    double spare_hosts = 0;  // held for the whole run (priced by the caller)
    std::string spare_unit;  // what one spare is: "host", "4x4x4 cube", "v5litepod-256 slice"
};
// `base`: goodput_model's result for the job (its checkpoint, restore and interval); `work_s`: the training's wall
// time without failures; `dp`: the plan's data-parallel replicas.
std::vector<RecoveryOption> recovery_options(const Goodput& base, const SystemSpec& sys, int dp, double work_s,
                                             const ReliabilityInputs& rel);

// `extra_interruptions_per_hour`: e.g. spot preemptions of the whole job.
Goodput goodput_model(const ModelSpec& m, const SystemSpec& sys, const StepResult& step, double token_budget,
                      const ReliabilityInputs& rel, double extra_interruptions_per_hour = 0);

}  // namespace podsim
