// The SimGrid run as a module of its own (libpodsim_simgrid.so, the only code that includes SimGrid): podsim loads
// it the first time --network simgrid needs it, so other commands do not map SimGrid and the ns-3 libraries Debian
// builds it against (issue #16). sim/simgrid_backend.cpp forks and calls it in the child.
#pragma once
#include <cstdint>
#include <vector>

#include "hardware/network_graph.hpp"
#include "sim/flows.hpp"

namespace podsim::simgrid_module {

// Every sender/receiver pair's route, looked up in the parent before the fork: the child reads this table and the
// graph's links only, never the graph's route cache, which another thread of the parent may be filling.
struct PairRoute {
    uint32_t src, dst;
    const std::vector<uint32_t>* links;
};
using Routes = std::vector<PairRoute>;

inline constexpr int kApiVersion = 2;  // 2: FlowPhase::repeat
struct Api {
    int version;
    // Runs the collectives' flows in one SimGrid engine (once per process): each one's end time.
    std::vector<double> (*run)(const std::vector<LoweredCollective>& concurrent, const NetworkGraph& g,
                               const Routes& routes);
};
using ApiEntry = const Api* (*)();
inline constexpr const char* kApiSymbol = "podsim_simgrid_api";

}  // namespace podsim::simgrid_module
