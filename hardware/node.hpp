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
    int host_vcpus = 0;                   // the VM's / node's vCPUs (input pipelines); 0 = not in the catalog
    // The host's memory and each GPU's own path to it (PCIe, or NVLink-C2C on Grace superchips), one direction:
    // where activations offloaded to the CPU go (0 = not in the catalog: podsim then offloads nothing).
    double host_memory_bytes = 0;
    double host_link_bytes_per_s = 0;
    // The NVLink domain: GPUs one GPU reaches over NVLink/NVSwitch. 8 on HGX/DGX (the node); 72 on GB200/GB300
    // NVL72, whose domain spans 18 compute trays (VMs of 4 GPUs on Google Cloud A4X). A multiple of gpus_per_node.
    int nvlink_domain_gpus = 0;
    bool nvlink_sharp = false;   // NVSwitch in-network reduction (NVLS, NVSwitch gen 3+): NCCL's NVLS algorithms
    bool network_sharp = false;  // scale-out switches reduce in the network (InfiniBand SHARP): NCCL CollNet
    // With in-network reduction, an all-reduce's per-GPU algorithm bandwidth as a fraction of the link's one-way
    // peak (NVLink per GPU; the GPU's NIC share): required where the capability is stated true.
    double nvls_bw_fraction = 0;
    double sharp_bw_fraction = 0;
    std::string fabric;          // the cluster fabric as its operator publishes it (display)
    std::string file;

    double host_memory_bytes_per_gpu() const { return host_memory_bytes / gpus_per_node; }
    int domain_gpus() const { return nvlink_domain_gpus > 0 ? nvlink_domain_gpus : gpus_per_node; }

    // Scale-out bandwidth available to one GPU when all GPUs of the node send at once.
    double nic_bytes_per_s_per_gpu() const {
        return gpu_nics_per_node * gpu_nic_bytes_per_s / gpus_per_node;
    }
};

NodeSpec node_from_json(const JsonObject& o);

}  // namespace podsim
