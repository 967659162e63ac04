// A concrete system to train on: a TPU slice (or several, over DCN) or a cluster of GPU nodes.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include "hardware/chip.hpp"
#include "hardware/node.hpp"

namespace podsim {

struct SystemSpec {
    std::string label;         // "v4-2048", "128 x a3-megagpu-8g"
    ChipSpec chip;
    int chips = 0;             // total
    // TPU
    std::string accelerator_type;  // per slice, e.g. "v4-2048"
    int slices = 1;
    std::vector<int> torus_dims;   // per slice
    std::vector<bool> wraps;       // per dim
    // GPU
    bool is_gpu = false;
    NodeSpec node;
    int nodes = 0;
    // Scale-out fabric (rail-optimized fat tree): nodes under one leaf switch per rail, and the leaf-to-spine
    // oversubscription (1 = full bisection, as a DGX SuperPOD scalable unit of 32 nodes).
    int nodes_per_leaf = 32;
    double oversubscription = 1.0;
    bool twisted = false;  // TPU: twisted torus wraparound (Cloud offers it for AxAx2A and Ax2Ax2A shapes)
    // GPU: GPUs per NVLink domain the job uses: the catalog's (8 on HGX, 72 on NVL72), or fewer where the
    // scenario says so (e.g. 64: 16 of each NVL72 rack's 18 trays). Groups inside a domain talk over NVLink even
    // across VMs; beyond it over the NICs.
    int nvlink_domain_gpus = 0;
    // The spread of the ranks' compute speeds as a coefficient of variation (the scenario's system.rank_speed_cv,
    // from a cluster's own telemetry): a synchronous step computes at its slowest rank's pace
    // (models/straggler.hpp). 0: identical ranks (podsim states no spread of its own).
    double rank_speed_cv = 0;

    int chips_per_slice() const { return chips / slices; }
    int chips_per_host() const { return is_gpu ? node.gpus_per_node : chip.tpu->chips_per_host; }
    // The NVLink domain in force: never more GPUs than the system has.
    int domain_gpus() const {
        return is_gpu ? std::min(chips, nvlink_domain_gpus > 0 ? nvlink_domain_gpus : node.gpus_per_node) : 0;
    }
    int hosts() const { return is_gpu ? nodes : std::max(1, chips / chip.tpu->chips_per_host); }
    // One host's general network (storage, checkpoints): the VM's general NIC on GPUs, the host's chips' DCN share
    // on TPUs.
    double host_network_bytes_per_s() const {
        return is_gpu ? node.host_network_bytes_per_s : chip.tpu->dcn_bytes_per_s_per_chip * chip.tpu->chips_per_host;
    }
};

}  // namespace podsim
