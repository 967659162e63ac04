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

}  // namespace

CollectiveCost collective_cost(Collective c, double bytes, const GroupNetwork& net) {
    if (net.size() <= 1 || bytes <= 0) return {0.0, "none"};
    switch (c) {
        case Collective::reduce_scatter:
        case Collective::all_gather: return {ring_pass_s(bytes, net), "ring"};
        case Collective::all_reduce: {
            // Ring: reduce-scatter + all-gather. Tree (double binary, NCCL): ~2 log2(n) latency steps, the
            // full buffer twice over the slowest level. Take the faster, as NCCL's tuner does.
            const double ring = 2 * ring_pass_s(bytes, net);
            double tree = 0, slowest = 1e300;
            for (const auto& l : net.levels) {
                tree += 2 * std::ceil(std::log2(std::max(2, l.size))) * l.latency_s;
                slowest = std::min(slowest, l.bytes_per_s);
            }
            tree += 2 * bytes / slowest;
            return ring <= tree ? CollectiveCost{ring, "ring"} : CollectiveCost{tree, "tree"};
        }
        case Collective::all_to_all: {
            // Each rank sends (n-1)/n of its data; across levels the outer share dominates (pairwise exchange).
            double t = 0, local = 1.0;
            for (const auto& l : net.levels) local *= l.size;
            double inner = 1.0;
            for (const auto& l : net.levels) {
                const double frac_out = (l.size - 1.0) / l.size * inner / 1.0;  // fraction leaving through this level
                t = std::max(t, bytes * frac_out / l.bytes_per_s) + (l.size - 1) * l.latency_s;
                inner = 1.0;
            }
            (void)local;
            return {t, "pairwise"};
        }
        case Collective::send_recv: {
            const auto& l = net.levels.back();
            return {bytes / l.bytes_per_s + l.latency_s, "p2p"};
        }
    }
    return {0.0, "none"};
}

}  // namespace podsim
