// Alpha-beta cost of collectives over a (hierarchical) group network, with the algorithm chosen by message size.
#pragma once
#include <string>

#include "hardware/topology.hpp"

namespace podsim {

enum class Collective { all_reduce, reduce_scatter, all_gather, all_to_all, send_recv };
const char* to_string(Collective c);

struct CollectiveCost {
    double time_s = 0;
    const char* algorithm = "none";
};

// `bytes` is the full (unsharded) buffer: an all-gather's output, a reduce-scatter's input, an all-reduce's buffer,
// all of one rank's outgoing data for all-to-all, the message for send/recv.
CollectiveCost collective_cost(Collective c, double bytes, const GroupNetwork& net);

}  // namespace podsim
