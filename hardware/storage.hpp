// Storage a training job reads its data from and writes its checkpoints to (issue #15): Cloud Storage, Filestore,
// Parallelstore, Hyperdisk ML, Managed Lustre, local SSD. Each is a set of throughput caps from its published
// limits (hardware/catalog/storage/*.json, every figure with its source): per client (one VM or TPU host), per
// instance, and per TiB of provisioned capacity where throughput scales with size. A job's throughput is the least
// of them: hosts x per-client, the instance's, capacity x per-TiB.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hardware/json_reader.hpp"

namespace podsim {

struct StorageLimits {
    std::optional<double> per_client_bytes_per_s;    // one VM / TPU host
    std::optional<double> per_instance_bytes_per_s;  // the bucket / instance / volume as a whole
    std::optional<double> per_tib_bytes_per_s;       // scales with provisioned capacity
};

struct StorageSpec {
    std::string id;
    std::string name;
    bool shared = true;         // false: local to each host (local SSD): no instance limit, data must be staged
    StorageLimits read, write;
    std::map<std::string, std::string> sources;  // per figure
    std::string notes;
};

StorageSpec storage_from_json(const JsonObject& o);

// The throughput `hosts` clients reach together on `s`, each also capped by its own network link
// (`host_link_bytes_per_s`, 0 = no cap), for a store of `capacity_tib` (0 = not stated: per-TiB caps then need
// it, and the result says so through `missing`). Returns bytes per second for the whole job, and names the binding
// limit in `binding` ("per-client limit", "instance limit", "per-TiB limit", "host network"). A direction with no
// published figure is refused through `missing` (e.g. writes to a read-only Hyperdisk ML volume).
struct StorageRate {
    double bytes_per_s = 0;
    std::string binding;
    std::string missing;  // a needed figure the scenario must state (non-empty: bytes_per_s is 0)
};
StorageRate storage_rate(const StorageSpec& s, bool write, int hosts, double host_link_bytes_per_s, double capacity_tib);

}  // namespace podsim
