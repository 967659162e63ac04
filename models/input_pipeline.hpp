// The input pipeline of a training step (issue #15): each host reads its share of the global batch from storage,
// decodes/tokenizes/packs it on its CPUs, and feeds its accelerators, while the step runs (prefetch). When that is
// slower than the step, the step waits. Plan-independent on a given system: every host feeds global batch / hosts
// samples per step whatever the split, so the planner applies it to every plan of the system alike.
#pragma once
#include <optional>
#include <string>

#include "hardware/storage.hpp"
#include "hardware/system.hpp"

namespace podsim {

struct DataSpec {
    StorageSpec storage;            // where the training data is read from
    double capacity_tib = 0;        // the store's provisioned size (throughput that scales with capacity)
    double bytes_per_token = 0;     // stored bytes read per trained token (pre-tokenized: 2-4; raw text ~4-5)
    double bytes_per_sample = 0;    // per sequence, besides (images, audio: the encoded media)
    double cpu_core_s_per_sample = 0;  // host CPU core-seconds to decode/tokenize/pack one sequence
    int host_cpu_cores = 0;         // cores the loader may use per host (0: the host's vCPUs from the catalog)
    int prefetch_steps = 2;         // batches prepared ahead; 0: the step waits for every batch (no overlap)
    std::string source;             // where the figures come from (the scenario's words)
};

struct InputTiming {
    int hosts = 0;
    double samples_per_host = 0, bytes_per_host = 0;  // per step
    double storage_s = 0;   // reading the step's bytes at the job's storage rate, per host
    double cpu_s = 0;       // decode/tokenize on the host's cores
    double per_step_s = 0;  // the slowest of the two (they pipeline with each other)
    std::string bottleneck;  // "storage (GCS per-client limit)", "host CPU (208 vCPUs)"
    double storage_bytes_per_s = 0;  // the job's aggregate read rate
    int cores = 0;
};

// Throws std::invalid_argument with the reason when a figure it needs is missing (host cores, capacity).
InputTiming input_timing(const DataSpec& d, const SystemSpec& sys, long long global_batch_seqs, int seq_len);

// What the step becomes with its input: the step waits for input past the compute step (prefetch overlaps the
// two; without prefetch the input adds).
inline double step_with_input_s(double step_s, double input_s, int prefetch_steps) {
    return prefetch_steps > 0 ? (input_s > step_s ? input_s : step_s) : step_s + input_s;
}

}  // namespace podsim
