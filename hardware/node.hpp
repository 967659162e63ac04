// A GPU machine: a cloud VM type (a3-megagpu-8g, ...) or an on-premise node (DGX H100), and its scale-out network.
#pragma once
#include <string>
#include <vector>

#include "hardware/json_reader.hpp"

namespace podsim {

struct NodeSpec {
    std::string id;                  // "a3-megagpu-8g", "dgx-h100"
    std::vector<std::string> aliases;
    std::string provider;            // "gcp" or "onprem"
    std::string chip;                // chip id in the catalog
    int gpus_per_node = 8;
    int gpu_nics_per_node = 0;       // NICs that carry GPU-to-GPU traffic
    double gpu_nic_bytes_per_s = 0;  // per NIC, one direction
    double network_latency_s = 0;    // per message step across nodes
    double network_efficiency = 1;   // achievable fraction of NIC rate for collectives (transport dependent)
    std::string network;             // "InfiniBand HDR", "GPUDirect-TCPXO", ...
    double host_network_bytes_per_s = 0;  // general NIC (checkpoints, storage)
    std::string file;

    // Scale-out bandwidth available to one GPU when all GPUs of the node send at once.
    double nic_bytes_per_s_per_gpu() const {
        return gpu_nics_per_node * gpu_nic_bytes_per_s / gpus_per_node;
    }
};

NodeSpec node_from_json(const JsonObject& o);

}  // namespace podsim
