#include "sim/flows.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <unordered_map>

namespace podsim {

namespace {

// Member index m <-> digits over dims (inner first).
std::vector<int> digits(int m, const GroupShape& s) {
    std::vector<int> d;
    for (const auto& dim : s.dims) d.push_back(m % dim.length), m /= dim.length;
    return d;
}
int index_of(const std::vector<int>& d, const GroupShape& s) {
    int m = 0, mul = 1;
    for (size_t k = 0; k < d.size(); ++k) m += d[k] * mul, mul *= s.dims[k].length;
    return m;
}

// One reduce-scatter or all-gather pass along dim k for every line of members, `share` bytes per member before a
// reduce-scatter (after an all-gather); a ring of len-1 steps, split both ways on a wrapped torus axis. The steps
// are alike (each member sends a chunk to its neighbour), so the pass is one phase repeated len - 1 times.
void ring_pass(FlowLane& lane, const std::vector<uint32_t>& members, const GroupShape& s, size_t k, double share) {
    const int len = s.dims[k].length;
    if (len <= 1) return;
    const bool both = s.dims[k].bidirectional;
    const double chunk = share / len / (both ? 2 : 1);
    const int n = static_cast<int>(members.size());
    int stride = 1;  // member index distance between neighbours along dim k (dims are inner first)
    for (size_t j = 0; j < k; ++j) stride *= s.dims[j].length;
    FlowPhase ph;
    ph.repeat = static_cast<uint32_t>(len - 1);
    ph.flows.reserve(static_cast<size_t>(n) * (both ? 2 : 1));
    for (int m = 0; m < n; ++m) {
        const int d = m / stride % len, base = m - d * stride;
        ph.flows.push_back({members[m], members[base + (d + 1) % len * stride], chunk});
        if (both) ph.flows.push_back({members[m], members[base + (d + len - 1) % len * stride], chunk});
    }
    lane.phases.push_back(std::move(ph));
}

// An in-network reduction's half (the reduce, or the multicast back) along dim k: every member of a line sends to
// every other, sized so that each GPU's link carries (n+1)/(2n) x share, scaled from the reduction's rate to the
// rate the graph gives the link. The switch does the arithmetic; the graph sees only the bytes on the links.
void in_network_half(FlowLane& lane, const std::vector<uint32_t>& members, const GroupShape& s, size_t k,
                     double share) {
    const int len = s.dims[k].length;
    if (len <= 1) return;
    const double per_peer = share * (len + 1.0) / len / 2 * s.dims[k].reduce_flow_scale / (len - 1);
    FlowPhase ph;
    const int n = static_cast<int>(members.size());
    for (int m = 0; m < n; ++m) {
        auto d = digits(m, s);
        for (int o = 1; o < len; ++o) {
            auto peer = d;
            peer[k] = (d[k] + o) % len;
            ph.flows.push_back({members[m], members[index_of(peer, s)], per_peer});
        }
    }
    lane.phases.push_back(std::move(ph));
}

}  // namespace

void merge_into(LoweredCollective& a, LoweredCollective&& b) {
    for (auto& l : b.lanes) a.lanes.push_back(std::move(l));
    if (a.algorithm == Algorithm::none) a.algorithm = b.algorithm;
}

LoweredCollective lower_collective(Collective c, double bytes, const std::vector<uint32_t>& members,
                                   const GroupShape& s, Algorithm algorithm) {
    const bool tree = algorithm == Algorithm::tree;
    LoweredCollective lc;
    const int n = static_cast<int>(members.size());
    if (n <= 1 || bytes <= 0) return lc;
    if (c == Collective::send_recv) {
        lc.algorithm = Algorithm::p2p;
        lc.lanes.push_back({{FlowPhase{{{members[0], members[1], bytes}}}}});
        return lc;
    }
    if (c == Collective::all_to_all) {
        // Every rank posts its n - 1 sends at once, as NCCL's all-to-all (grouped ncclSend/ncclRecv to every peer)
        // and XLA's on the TPU ICI do: one phase, the links shared by all pairs, so the time is set by the busiest
        // link of the routes (on a torus the bisection), not by n - 1 barriers.
        lc.algorithm = Algorithm::pairwise;
        FlowPhase ph;
        for (int m = 0; m < n; ++m)
            for (int step = 1; step < n; ++step) ph.flows.push_back({members[m], members[(m + step) % n], bytes / n});
        lc.lanes.push_back({{std::move(ph)}});
        return lc;
    }
    if (c == Collective::all_reduce && tree) {
        // Binary tree: reduce to member 0 level by level, then broadcast back (not pipelined: small messages).
        lc.algorithm = Algorithm::tree;
        FlowLane lane;
        std::vector<FlowPhase> up;
        for (int span = 1; span < n; span *= 2) {
            FlowPhase ph;
            for (int m = 0; m + span < n; m += 2 * span) ph.flows.push_back({members[m + span], members[m], bytes});
            up.push_back(std::move(ph));
        }
        lane.phases = up;
        for (auto it = up.rbegin(); it != up.rend(); ++it) {
            FlowPhase down;
            for (const auto& f : it->flows) down.flows.push_back({f.dst, f.src, f.bytes});
            lane.phases.push_back(std::move(down));
        }
        lc.lanes.push_back(std::move(lane));
        return lc;
    }
    const bool in_network = algorithm == Algorithm::nvls || algorithm == Algorithm::nvls_tree ||
                            algorithm == Algorithm::collnet;
    if (c == Collective::all_reduce && in_network) {
        // As the closed form (in_network_all_reduce): one lane per level, all at once (the levels pipelined);
        // a level with a reduction unit reduces, then multicasts, its share in the switch; the others run a ring
        // reduce-scatter and all-gather on theirs.
        lc.algorithm = algorithm;
        double share = bytes;
        for (size_t k = 0; k < s.dims.size(); ++k) {
            FlowLane lane;
            for (int half = 0; half < 2; ++half) {
                if (s.dims[k].reduce_flow_scale > 0) in_network_half(lane, members, s, k, share);
                else ring_pass(lane, members, s, k, share);
            }
            lc.lanes.push_back(std::move(lane));
            share /= s.dims[k].length;
        }
        return lc;
    }
    if (algorithm == Algorithm::flat_ring && s.dims.size() == 2 && s.dims[0].intra_node) {
        // k channels. On node x, channel c enters at local (c - x) mod k and leaves from the local just before it,
        // which is where it enters node x+1: every node-to-node hop stays on one rail (GPU -> NIC -> leaf -> NIC ->
        // GPU), and the k channels use k different rails.
        lc.algorithm = Algorithm::flat_ring;
        const int k = s.dims[0].length, m = s.dims[1].length;
        for (int ch = 0; ch < k; ++ch) {
            std::vector<uint32_t> order;
            for (int node = 0; node < m; ++node) {
                const int first = ((ch - node) % k + k) % k;
                for (int j = 0; j < k; ++j) order.push_back(members[node * k + (first + j) % k]);
            }
            FlowPhase ph;  // every step of the ring alike: one phase, repeated
            const double chunk = bytes / k / n;
            const int passes = c == Collective::all_reduce ? 2 : 1;
            ph.repeat = static_cast<uint32_t>(passes * (n - 1));
            for (int i = 0; i < n; ++i) ph.flows.push_back({order[i], order[(i + 1) % n], chunk});
            lc.lanes.push_back({{std::move(ph)}});
        }
        return lc;
    }
    // Ring family. Torus axes form the multi-ring: lane i carries 1/D of the data through the D axes in the order
    // i, i+1, ... so that every axis is busy at once; NVLink-then-network levels (GPU) and DCN (last) are passed
    // in order, inner first. Reduce-scatter walks the dims inward-out, all-gather outward-in.
    std::vector<size_t> ici, seq, dcn;
    for (size_t k = 0; k < s.dims.size(); ++k) (s.dims[k].ici ? ici : s.dims[k].dcn ? dcn : seq).push_back(k);
    const size_t D = std::max<size_t>(1, ici.size());
    lc.algorithm = ici.size() > 1 ? Algorithm::multi_ring : s.dims.size() > 1 ? Algorithm::hierarchical_ring
                                                                               : Algorithm::ring;
    if (s.dims.size() == 1 && s.dims[0].bidirectional) lc.algorithm = Algorithm::bidirectional_ring;
    for (size_t lane_i = 0; lane_i < D; ++lane_i) {
        std::vector<size_t> order = seq;
        for (size_t j = 0; j < ici.size(); ++j) order.push_back(ici[(lane_i + j) % ici.size()]);
        order.insert(order.end(), dcn.begin(), dcn.end());
        FlowLane lane;
        const double lane_bytes = bytes / D;
        if (c == Collective::reduce_scatter || c == Collective::all_reduce) {
            double share = lane_bytes;
            for (size_t k : order) ring_pass(lane, members, s, k, share), share /= s.dims[k].length;
        }
        if (c == Collective::all_gather || c == Collective::all_reduce) {
            double share = lane_bytes / n;
            for (auto it = order.rbegin(); it != order.rend(); ++it)
                share *= s.dims[*it].length, ring_pass(lane, members, s, *it, share);
        }
        lc.lanes.push_back(std::move(lane));
    }
    return lc;
}

double analytical_time_s(const LoweredCollective& lc, const NetworkGraph& g) {
    // Per phase: the busiest link's bytes over its bandwidth (flows of one collective may share links, e.g.
    // all-to-all on a torus or the channels of a flat ring), plus the longest path latency. Other traffic is not seen.
    // Lanes step in lockstep, a repeated phase counting as that many steps; while no lane changes phase the steps
    // are alike, so they are priced once and counted.
    struct Cursor {
        size_t phase = 0;
        uint32_t done = 0;  // repeats of the current phase already run
    };
    std::vector<Cursor> at(lc.lanes.size());
    double t = 0;
    std::unordered_map<uint32_t, double> load;
    for (;;) {
        load.clear();
        double lat = 0, busiest = 0;
        uint32_t alike = UINT32_MAX;
        for (size_t i = 0; i < lc.lanes.size(); ++i) {
            const auto& lane = lc.lanes[i];
            if (at[i].phase >= lane.phases.size()) continue;
            const FlowPhase& ph = lane.phases[at[i].phase];
            alike = std::min(alike, ph.repeat - at[i].done);
            for (const auto& f : ph.flows) {
                if (f.src == f.dst) continue;
                const auto& r = g.route(f.src, f.dst);
                lat = std::max(lat, g.path_latency_s(r));
                for (uint32_t l : r) load[l] += f.bytes;
            }
        }
        if (alike == UINT32_MAX) return t;
        for (const auto& [l, bytes] : load) busiest = std::max(busiest, bytes / g.links[l].bytes_per_s);
        t += alike * (busiest + lat);
        for (size_t i = 0; i < lc.lanes.size(); ++i) {
            if (at[i].phase >= lc.lanes[i].phases.size()) continue;
            at[i].done += alike;
            if (at[i].done == lc.lanes[i].phases[at[i].phase].repeat) at[i] = {at[i].phase + 1, 0};
        }
    }
}

}  // namespace podsim
