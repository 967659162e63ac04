// Collectives lowered to point-to-point flows on a network graph, and the two network backends that time them:
// analytical (per phase: the busiest link's bytes over its bandwidth, plus the longest path latency; no other
// traffic) and SimGrid (flow-level max-min sharing of every link, all lanes and groups at once).
#pragma once
#include <string>
#include <vector>

#include "hardware/network_graph.hpp"
#include "placement/placement.hpp"
#include "sim/collectives.hpp"

namespace podsim {

struct Flow {
    uint32_t src = 0, dst = 0;  // global chip ranks
    double bytes = 0;
};
struct FlowPhase {
    std::vector<Flow> flows;  // concurrent; the phase ends when all have arrived (ring step barrier)
    // The phase runs this many times back to back: a ring's len - 1 steps move the same bytes between the same
    // neighbours, so they are one phase with a count (a 6,144-chip ring is not 6,143 copies of its flows).
    uint32_t repeat = 1;
};
struct FlowLane {
    std::vector<FlowPhase> phases;  // one after another
};
struct LoweredCollective {
    Algorithm algorithm = Algorithm::none;
    std::vector<FlowLane> lanes;  // concurrent
};

// Ring (bidirectional on wrapped torus axes), dimension-ordered multi-ring over torus axes (one lane per axis,
// each starting on a different axis), hierarchical NVLink-then-network on GPU nodes, DCN last across slices;
// flat ring with one channel per member of a node (NCCL's multi-node ring: each channel leaves the node on another
// NIC); binary tree for small all-reduces; all-to-all as every pair at once (one phase).
// `algorithm` is what the closed form chose: tree and flat ring are followed, any other picks the ring family
// (named after the shape: ring, bidirectional ring, multi-ring or hierarchical ring).
LoweredCollective lower_collective(Collective c, double bytes, const std::vector<uint32_t>& members,
                                   const GroupShape& shape, Algorithm algorithm = Algorithm::ring);

// Appends the lanes of `b` to `a` (instances that run at the same time).
void merge_into(LoweredCollective& a, LoweredCollective&& b);

// Lanes advance in lockstep: phase j of every lane shares the links.
double analytical_time_s(const LoweredCollective& lc, const NetworkGraph& g);

// Runs the flows in SimGrid (S4U) on a platform built from the graph: one SimGrid link per graph link, CM02
// network model with no cross-traffic, so that a lone flow takes exactly bytes / bandwidth + latency. SimGrid keeps
// one engine per process, so each call runs in a forked child. Returns the time the last lane finishes. When the
// simulation fails, throws std::runtime_error with the reason (SimGrid's exception text, or how its process ended).
double simgrid_time_s(const std::vector<LoweredCollective>& concurrent, const NetworkGraph& g);
// Whether the SimGrid module (libpodsim_simgrid.so, loaded on first use) can be loaded; if not, why.
bool simgrid_backend_available(std::string* why);
// The same run, with the time each of the concurrent collectives finishes.
std::vector<double> simgrid_end_times_s(const std::vector<LoweredCollective>& concurrent, const NetworkGraph& g);

}  // namespace podsim
