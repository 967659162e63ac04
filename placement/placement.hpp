// Where a parallel group's members sit in the machine, and the network levels a collective over them crosses.
//
// GPU cluster (rail-optimized):            TPU slice (3D torus, e.g. 4x4x4 per cube):
//   node: 8 GPUs --NVSwitch-- all-to-all     chip - chip - chip - chip   (ICI, wraparound on
//   GPU i of every node -> NIC i -> rail i     |      |      |      |     full-cube dims)
//   level 0: NVLink inside the node          level 0: the torus axes the group spans
//   level 1: NICs (one per GPU) across nodes level 1: DCN between slices (multislice)
#pragma once
#include <string>
#include <vector>

#include "hardware/registry.hpp"
#include "hardware/system.hpp"

namespace podsim {

// What a network level is, where the collective algorithms differ by it (a level's name is only its label).
enum class LevelKind {
    generic,    // a plain ring level (networks built by hand, the CPU loopback)
    nvlink,     // GPU: the NVLink/NVSwitch domain inside a node, all-to-all
    scale_out,  // GPU: the nodes' NICs, one rail per GPU, across nodes
    ici,        // TPU: torus axes inside a slice (NetLevel::axes of them)
    dcn,        // TPU: the data-center network between slices
};
const char* to_string(LevelKind k);
// `podsim list`: the level kinds, and the topologies build_network makes (NetworkGraph::kind), with the catalog
// figures that shape them.
const std::vector<ChoiceDoc>& level_kind_docs();
const std::vector<ChoiceDoc>& topology_docs();

// One torus axis a TPU group spans: `length` members `stride` chips apart; `ring` when they cover the whole axis
// and it wraps (routes take the shorter way round), else a line.
struct IciAxis {
    int length = 1;
    int stride = 1;
    bool ring = false;
    double bytes_per_s = 0;  // a member's rate along the axis in a ring pass (both ways on a wrapped ring)
};

// One tier of a hierarchical collective: `size` ranks, each with `bytes_per_s` of one-direction bandwidth.
struct NetLevel {
    int size = 1;
    double bytes_per_s = 0;
    double latency_s = 0;  // per algorithm step
    int steps = 0;         // ring steps of one reduce-scatter or all-gather pass at this level
    std::string name;      // display only: "NVLink", "IB x1 rail", "ICI 2 axes torus", "DCN"
    LevelKind kind = LevelKind::generic;
    int axes = 0;          // ICI: torus axes the level spans (more than one: a multi-ring)
    int wrapped_axes = 0;  // ICI: of them, whole axes that close into a ring (the rest are lines)
    // In-network reduction at this level (NVLS on an NVSwitch domain, SHARP on the scale-out switches): an
    // all-reduce's algorithm bandwidth per rank; 0: the level has none.
    double reduce_bytes_per_s = 0;
    // ICI: the axes one by one and one link's one-direction rate, for collectives priced by the load of their
    // routes on each link (all-to-all) rather than by the rings' summed bandwidth.
    std::vector<IciAxis> ici_axes{};
    double link_bytes_per_s = 0;
};

struct GroupNetwork {
    std::vector<NetLevel> levels;  // inner (fast) first; empty when the group has one member
    bool placeable = true;
    std::string why_not;           // when !placeable
    int size() const;
    std::string describe() const;  // "NVLink x8" or "NVLink x2 + IB x4"
};

// Places group `which` of a layout whose dimensions are listed innermost (fastest-varying rank) first:
// GPUs fill nodes in rank order; TPU groups take whole torus axes in order, spilling outermost into DCN slices.
GroupNetwork place_group(const SystemSpec& sys, const std::vector<int>& sizes_inner_to_outer, size_t which);

// GPU: whether every member of group `which` sits in one NVLink domain (always true on TPU, which has none).
// Transformer Engine's TP communication overlap (userbuffers over CUDA IPC) works only there.
bool inside_one_nvlink_domain(const SystemSpec& sys, const std::vector<int>& sizes_inner_to_outer, size_t which);

// The shape of a group for lowering collectives to flows: its member index is mixed-radix over `dims` (inner first).
// GPU: [members per node (NVLink), nodes (NICs)]; TPU: one dim per torus axis it spans, then DCN slices.
struct GroupDim {
    int length = 1;
    bool bidirectional = false;  // a wrapped torus axis: rings both ways
    bool dcn = false;            // crosses slices over the data-center network
    bool intra_node = false;     // GPU: inside one NVLink domain
    bool ici = false;            // TPU: a torus axis (rings on all axes at once: multi-ring)
    // In-network reduction on this dim: the link rate the graph gives it over the reduction's achieved rate, so
    // that flows sized by it load the links as the reduction does (0: none).
    double reduce_flow_scale = 0;
};
struct GroupShape {
    std::vector<GroupDim> dims;  // product of lengths = group size
};
GroupShape group_shape(const SystemSpec& sys, const std::vector<int>& sizes_inner_to_outer, size_t which);

// Every instance of group `which` (e.g. all 512 data-parallel groups), members as global chip ranks in group order.
std::vector<std::vector<uint32_t>> group_instances(const std::vector<int>& sizes_inner_to_outer, size_t which);

// Point-to-point bandwidth between neighbouring members of group `which` (pipeline stages).
NetLevel neighbour_link(const SystemSpec& sys, const std::vector<int>& sizes_inner_to_outer, size_t which);

}  // namespace podsim
