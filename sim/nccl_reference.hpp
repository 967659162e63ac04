// Published nccl-tests results (hardware/catalog/collectives/nccl_tests.json) against podsim's collective model:
// the same collective, buffer and GPUs, priced by the closed form or SimGrid, reported as nccl-tests' bus bandwidth
// (busbw = algbw x 2 (n-1)/n for all-reduce, (n-1)/n for reduce-scatter and all-gather; NCCL PERFORMANCE.md).
#pragma once
#include <string>
#include <vector>

#include "hardware/catalog.hpp"
#include "sim/network_backend.hpp"

namespace podsim {

struct NcclReference {
    std::string id, system, collective, algorithm, source;
    Collective kind = Collective::all_reduce;
    int gpus = 0, nodes = 0;
    double bytes = 0;
    double busbw_bytes_per_s = 0;  // published
};

struct NcclCheck {
    NcclReference ref;
    std::string predicted_algorithm;
    double predicted_busbw_bytes_per_s = 0;
    double error() const { return predicted_busbw_bytes_per_s / ref.busbw_bytes_per_s - 1; }
};

// Throws InputError naming the file and JSON path on a bad entry (an unknown system, GPUs that are not whole nodes).
std::vector<NcclReference> load_nccl_references(const std::string& file, const Catalog& cat);
// The catalog's file, next to the chips and systems.
std::string default_nccl_reference_file();

NcclCheck check_nccl(const NcclReference& ref, const Catalog& cat, NetworkBackend backend);

}  // namespace podsim
