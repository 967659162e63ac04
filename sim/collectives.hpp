// Alpha-beta cost of collectives over a (hierarchical) group network, with the algorithm chosen by message size.
#pragma once
#include <optional>
#include <string_view>
#include <vector>

#include "hardware/registry.hpp"
#include "placement/placement.hpp"

namespace podsim {

enum class Collective { all_reduce, reduce_scatter, all_gather, all_to_all, send_recv };
const char* to_string(Collective c);

// How a collective is carried out: the closed form picks one (collective_cost), the flow lowering follows it
// (lower_collective), and reports name it. Names are for input and output only.
enum class Algorithm {
    none,                // nothing to move (one member, no bytes)
    ring,                // one ring over one level
    bidirectional_ring,  // one torus axis, the ring split both ways
    multi_ring,          // several torus axes at once, one lane starting on each
    hierarchical_ring,   // level by level, inner first (NVLink then the NICs; ICI then DCN)
    flat_ring,           // GPU: one ring over all members, one channel per member of a node (NCCL's default)
    tree,                // binary tree reduce + broadcast, small all-reduces
    all_to_all,          // the closed form's all-to-all: all levels at once, the slowest sets the time
    pairwise,            // all-to-all lowered to flows: every pair at once, one phase
    p2p,                 // one send/receive between neighbours
    nvls,                // all-reduce reduced in the NVSwitch (NVLink SHARP), one NVLink domain
    nvls_tree,           // NVLS inside each domain, a ring or tree between domains (NCCL's NVLSTree)
    collnet,             // the scale-out level reduced in the network switches (InfiniBand SHARP; NCCL CollNet)
};
const char* to_string(Algorithm a);
std::optional<Algorithm> algorithm_from_string(std::string_view name);
const std::vector<ChoiceDoc>& algorithm_docs();  // `podsim list`, in enum order

struct CollectiveCost {
    double time_s = 0;
    Algorithm kind = Algorithm::none;  // what the lowering to flows follows
    const char* algorithm = "none";    // to_string(kind): the label reports print
};
inline CollectiveCost priced(double time_s, Algorithm a) { return {time_s, a, to_string(a)}; }

// `bytes` is the full (unsharded) buffer: an all-gather's output, a reduce-scatter's input, an all-reduce's buffer,
// all of one rank's outgoing data for all-to-all, the message for send/recv.
CollectiveCost collective_cost(Collective c, double bytes, const GroupNetwork& net);

// An all-to-all of `bytes` per rank over a TPU group's torus axes (an ICI level with ici_axes), every instance of
// the group at once, on dimension-ordered routes: the busiest link's time, and the longest route in links.
struct TorusAllToAll {
    double busiest_link_s = 0;
    int hops = 0;
};
TorusAllToAll torus_all_to_all(double bytes, const NetLevel& level);

// One message over one link (a pipeline hand-off between neighbouring stages): bytes / bytes_per_s + latency_s; a
// link without bandwidth (a pipeline of one stage has no neighbour) costs nothing. The one formula for a send, used
// by collective_cost, CollectiveTimer and the step's pricer.
CollectiveCost p2p_cost(double bytes, const NetLevel& link);

}  // namespace podsim
