#include "sim/collectives.hpp"

#include <cmath>

namespace podsim {

const char* to_string(Collective c) {
    switch (c) {
        case Collective::all_reduce: return "all-reduce";
        case Collective::reduce_scatter: return "reduce-scatter";
        case Collective::all_gather: return "all-gather";
        case Collective::all_to_all: return "all-to-all";
        case Collective::send_recv: return "send/recv";
    }
    return "?";
}

namespace {

// One reduce-scatter or all-gather pass, hierarchical: level l moves the data left after the inner levels,
// bytes / prod(inner sizes), with (n-1)/n of it crossing its links (ring; Thakur et al. 2005, eq. for ring allgather).
double ring_pass_s(double bytes, const GroupNetwork& net) {
    double t = 0, share = bytes;
    for (const auto& l : net.levels) {
        if (l.size > 1) t += (l.size - 1.0) / l.size * share / l.bytes_per_s + l.steps * l.latency_s;
        share /= l.size;
    }
    return t;
}

// A flat ring over a two-level GPU group (k members per node, NVLink then NICs), NCCL's default: k channels, each
// leaving the node through a different NIC, so every hop runs at min(NVLink, k x NIC) per member.
double flat_ring_pass_s(double bytes, const GroupNetwork& net) {
    const auto& in = net.levels[0];
    const auto& out = net.levels[1];
    const double n = double(in.size) * out.size;
    const double bw = std::min(in.bytes_per_s, in.size * out.bytes_per_s);
    return (n - 1) / n * bytes / bw + (n - 1) * std::max(in.latency_s, out.latency_s);
}

bool two_level_gpu(const GroupNetwork& net) {
    return net.levels.size() == 2 && net.levels[0].name == "NVLink" && net.levels[0].size > 1;
}

const char* ring_name(const GroupNetwork& net) {
    if (net.levels.size() == 1 && net.levels[0].name.rfind("ICI", 0) == 0)
        return net.levels[0].name.find("axes") != std::string::npos ? "multi-ring" : "bidirectional ring";
    if (net.levels.size() > 1) return "hierarchical ring";
    return "ring";
}

}  // namespace

CollectiveCost collective_cost(Collective c, double bytes, const GroupNetwork& net) {
    if (net.size() <= 1 || bytes <= 0) return {0.0, "none"};
    // One reduce-scatter or all-gather pass: hierarchical, or for two-level GPU groups the flat ring when faster
    // (NCCL's tuner picks by the same bandwidths).
    CollectiveCost pass{ring_pass_s(bytes, net), ring_name(net)};
    if (two_level_gpu(net)) {
        const double flat = flat_ring_pass_s(bytes, net);
        if (flat < pass.time_s) pass = {flat, "flat ring"};
    }
    switch (c) {
        case Collective::reduce_scatter:
        case Collective::all_gather: return pass;
        case Collective::all_reduce: {
            // Ring: reduce-scatter + all-gather. Tree for small messages: a binary tree reduce then broadcast over
            // each level, 2 ceil(log2 n) steps of the whole buffer (not pipelined). Take the faster.
            const double ring = 2 * pass.time_s;
            double tree = 0;
            for (const auto& l : net.levels)
                tree += 2 * std::ceil(std::log2(std::max(2, l.size))) * (l.latency_s + bytes / l.bytes_per_s);
            return ring <= tree ? CollectiveCost{ring, pass.algorithm} : CollectiveCost{tree, "tree"};
        }
        case Collective::all_to_all: {
            // Each member sends bytes/n to every other member. Level l carries what leaves the members inside it:
            // a fraction (n - inner x size_l) / n ... summed as the share of destinations beyond the inner levels.
            // The levels run at once (NVLink and the NICs, ICI and DCN), so the slowest sets the time. On a torus
            // a message crosses several links: the mean distance over the group's axes, about steps / 4 for
            // wrapped axes (a quarter of each ring), spreads it over the level's links.
            const double n = net.size();
            double t = 0, inner = 1, lat = 0;
            for (const auto& l : net.levels) {
                const double beyond = (n - inner) / n;   // destinations outside the inner levels
                const double here = beyond - (n - inner * l.size) / n;  // ... that this level reaches
                const bool ici = l.name.rfind("ICI", 0) == 0;
                const double hops = ici ? std::max(1.0, l.steps / 4.0) : 1.0;
                t = std::max(t, bytes * here * hops / l.bytes_per_s);
                lat += l.steps * l.latency_s;
                inner *= l.size;
            }
            return {t + lat, "all-to-all"};
        }
        case Collective::send_recv: {
            const auto& l = net.levels.back();
            return {bytes / l.bytes_per_s + l.latency_s, "p2p"};
        }
    }
    return {0.0, "none"};
}

}  // namespace podsim
