// The interconnect as a graph of nodes (chips, switches, NICs, hosts) and one-direction links, built from the
// catalog for a system, with shortest-path routes. Boost.Graph stays inside the .cpp.
//
// TPU slice:  chip(x,y,z) --ICI--> chip(x+-1,y,z) ...   (wraparound where the slice is a torus; twisted on request)
//             chip --PCIe--> host --DCN--> dcn <--DCN-- host <-- chip   (multislice)
// GPU nodes:  gpu --NVLink--> nvswitch --NVLink--> gpu                  (all-to-all inside the node)
//             gpu --PCIe--> nic --> leaf[rail, pod] --> spine[rail] --> leaf --> nic --> gpu
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hardware/system.hpp"

namespace podsim {

struct NetLink {
    uint32_t src = 0, dst = 0;
    double bytes_per_s = 0;  // achievable (catalog efficiency applied)
    double latency_s = 0;
    std::string name;
};

class NetworkGraph {
public:
    std::string kind;                // "tpu-torus" or "gpu-rail-fat-tree"
    std::vector<std::string> node_names;
    std::vector<NetLink> links;
    std::vector<uint32_t> chip_node;  // global chip rank -> node

    // Links on the path from chip a to chip b: the builder's own routing where it has one (direct_route), else
    // the shortest path by BFS (ties broken by link order). Cached per pair; safe to call from several threads once
    // the graph is built (add_* are not).
    const std::vector<uint32_t>& route(uint32_t chip_a, uint32_t chip_b) const;
    // The same path found by BFS, whatever direct_route says (tests compare the two).
    std::vector<uint32_t> bfs_route(uint32_t chip_a, uint32_t chip_b) const;
    // Routing from the topology's structure, O(path length): a search per source costs O(nodes) time and, kept,
    // O(nodes) memory, i.e. O(chips^2) for a whole machine (2.4 GiB at 16k GPUs). Set by build_network; empty for
    // hand-built graphs and twisted tori, which use BFS.
    std::function<void(uint32_t chip_a, uint32_t chip_b, std::vector<uint32_t>& path)> direct_route;
    // Inline: the SimGrid module (sim/simgrid_run.cpp) calls it and links no podsim library.
    double path_latency_s(const std::vector<uint32_t>& r) const {
        double t = 0;
        for (uint32_t l : r) t += links[l].latency_s;
        return t;
    }
    double path_bytes_per_s(const std::vector<uint32_t>& r) const;  // bottleneck

    NetworkGraph();
    ~NetworkGraph();
    NetworkGraph(NetworkGraph&&) noexcept;
    NetworkGraph& operator=(NetworkGraph&&) noexcept;

    uint32_t add_node(std::string name);
    void add_link(uint32_t a, uint32_t b, double bytes_per_s, double latency_s, const std::string& name);
    void add_duplex(uint32_t a, uint32_t b, double bytes_per_s, double latency_s, const std::string& name);

private:
    std::vector<uint32_t> bfs_path(uint32_t node_a, uint32_t node_b) const;
    struct Cache;
    std::unique_ptr<Cache> cache_;
};

NetworkGraph build_network(const SystemSpec& sys);

}  // namespace podsim
