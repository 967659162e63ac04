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

    int chips_per_slice() const { return chips / slices; }
    int chips_per_host() const { return is_gpu ? node.gpus_per_node : chip.tpu->chips_per_host; }
    int hosts() const { return is_gpu ? nodes : std::max(1, chips / chip.tpu->chips_per_host); }
};

}  // namespace podsim
