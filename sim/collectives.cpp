#include "sim/collectives.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

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

const char* to_string(Algorithm a) {
    switch (a) {
        case Algorithm::none: return "none";
        case Algorithm::ring: return "ring";
        case Algorithm::bidirectional_ring: return "bidirectional ring";
        case Algorithm::multi_ring: return "multi-ring";
        case Algorithm::hierarchical_ring: return "hierarchical ring";
        case Algorithm::flat_ring: return "flat ring";
        case Algorithm::tree: return "tree";
        case Algorithm::all_to_all: return "all-to-all";
        case Algorithm::pairwise: return "pairwise";
        case Algorithm::p2p: return "p2p";
        case Algorithm::nvls: return "nvls";
        case Algorithm::nvls_tree: return "nvls-tree";
        case Algorithm::collnet: return "collnet";
    }
    return "?";
}

std::optional<Algorithm> algorithm_from_string(std::string_view name) {
    for (int i = 0;; ++i) {
        const auto a = static_cast<Algorithm>(i);
        const std::string_view s = to_string(a);
        if (s == "?") return std::nullopt;
        if (s == name) return a;
    }
}

const std::vector<ChoiceDoc>& algorithm_docs() {
    static const std::vector<ChoiceDoc> docs = [] {
        const ParamDoc bytes{"bytes", "the full buffer: all-gather output, reduce-scatter input, all-reduce one, B"};
        const ParamDoc levels{"levels", "the group's network levels, inner first: size, bytes_per_s, latency_s, "
                                        "steps"};
        return std::vector<ChoiceDoc>{
            {to_string(Algorithm::none), "a group of one, or nothing to send: no time", {}},
            {to_string(Algorithm::ring),
             "one pass (reduce-scatter or all-gather) over n ranks: (n-1)/n x bytes / bytes_per_s + steps x "
             "latency_s; an all-reduce is two passes (Thakur et al. 2005)",
             {bytes, levels}},
            {to_string(Algorithm::bidirectional_ring),
             "a ring on one torus axis; on a whole wrapped axis half the data goes each way (two links' worth)",
             {bytes, levels, {"wrapped_axes", "1 when the axis is whole and wraps"}}},
            {to_string(Algorithm::multi_ring),
             "a group over several torus axes: the data split into one lane per axis, each lane visiting the axes in "
             "its own order so that every axis is busy at once; timed lane by lane (lanes on one axis split it), which is "
             "the axes' summed bandwidth only when the axes are alike",
             {bytes, levels, {"axes", "torus axes the group spans (the ICI level's count)"}}},
            {to_string(Algorithm::hierarchical_ring),
             "level by level, inner first: level l carries bytes / (inner sizes) (NVLink then the NICs; ICI then DCN)",
             {bytes, levels}},
            {to_string(Algorithm::flat_ring),
             "GPU groups over NVLink and NICs: one ring over all n ranks in k channels (k members per node), each "
             "leaving the node on its own rail, every hop at min(NVLink, k x NIC); taken when faster than the "
             "hierarchical ring",
             {bytes, {"levels", "exactly an nvlink level of k > 1 members and a scale-out level"}}},
            {to_string(Algorithm::tree),
             "all-reduce as a binary tree reduce then broadcast per level, 2 ceil(log2 n) steps of the whole buffer "
             "(not pipelined); taken when faster than the ring (small messages)",
             {bytes, levels}},
            {to_string(Algorithm::all_to_all),
             "closed form: each rank sends bytes/n to every other; each level carries the share of destinations "
             "beyond the inner levels, all levels at once (the slowest sets the time); on ICI the busiest link of "
             "the dimension-ordered routes with every instance sending: per axis of L members s chips apart, "
             "bytes x L/8 x s (a whole wrapped axis) or bytes x floor(L/2) ceil(L/2)/L x s (a line) over one link",
             {{"bytes", "all of one rank's outgoing data, B"}, levels}},
            {to_string(Algorithm::pairwise),
             "all-to-all lowered to flows: every rank sends bytes/n to each of the n - 1 others at once (one phase)",
             {{"bytes", "all of one rank's outgoing data, B"}}},
            {to_string(Algorithm::p2p), "one message to the neighbouring rank: bytes / bytes_per_s + latency_s",
             {{"bytes", "the message, B"}, {"link", "the outermost level the pair spans (on ICI one link)"}}},
            {to_string(Algorithm::nvls),
             "all-reduce inside one NVSwitch domain reduced in the switch (NVLink SHARP, NVSwitch gen 3+): each GPU "
             "sends its buffer to the switch once and receives the reduced result by multicast, (n+1)/n x bytes / "
             "reduce_bytes_per_s + 2 latency_s; taken when faster than ring and tree (large messages)",
             {bytes, {"reduce_bytes_per_s", "system catalog: NVLink per GPU x nvls_bw_fraction"}}},
            {to_string(Algorithm::nvls_tree),
             "all-reduce across NVLink domains: NVLS inside each domain on the whole buffer, the domains' share "
             "all-reduced between them by ring or tree (NCCL's NVLSTree)",
             {bytes, levels}},
            {to_string(Algorithm::collnet),
             "all-reduce whose scale-out level is reduced in the network switches (InfiniBand SHARP): each rank sends "
             "its share up once and receives the result once, share / reduce_bytes_per_s",
             {bytes, {"reduce_bytes_per_s", "system catalog: NIC share per GPU x sharp_bw_fraction"}}},
        };
    }();
    return docs;
}

CollectiveCost p2p_cost(double bytes, const NetLevel& link) {
    if (link.bytes_per_s <= 0) return priced(0.0, Algorithm::none);
    return priced(bytes / link.bytes_per_s + link.latency_s, Algorithm::p2p);
}

namespace {

// Which ring passes a collective makes: a reduce-scatter walks the dims inward-out, an all-gather outward-in, an
// all-reduce both, one after the other (sim/flows.cpp lowers them the same way).
enum class Passes { reduce_scatter, all_gather, all_reduce };

// The most torus axes multi_ring_s schedules (a torus has 3): fixed arrays keep it off the heap, the planner's hot
// path.
constexpr size_t kMaxRingAxes = 4;

// The bandwidth part of the ring passes of `bytes` over a TPU group's torus axes as a multi-ring: D lanes, each
// with 1/D of the data, lane i passing the axes in the order i, i+1, ... (reversed for an all-gather; the flow
// lowering's lanes, sim/flows.cpp). A reduce-scatter pass along an axis of L members moves (L-1)/L of the lane's
// share, which then shrinks by L for the next axis (an all-gather the same amounts, last first). The lanes run at
// once and lanes on the same axis split its rate (their flows take the same links), so the time is that of this
// small fluid schedule, not the total over the summed rates: a slow axis (strided, or a line) holds up the lane
// that passes it with the most data while the others wait on nothing.
double multi_ring_s(double bytes, const std::vector<IciAxis>& axes, Passes passes) {
    constexpr size_t kMaxAxes = kMaxRingAxes;
    const size_t D = axes.size();
    const size_t P = passes == Passes::all_reduce ? 2 * D : D;  // passes per lane
    std::array<std::array<double, 2 * kMaxAxes>, kMaxAxes> left{};  // per lane, the bytes still to move per pass
    std::array<std::array<size_t, 2 * kMaxAxes>, kMaxAxes> axis{};  // per lane, the axis of each pass
    for (size_t i = 0; i < D; ++i) {
        std::array<double, kMaxAxes> rs{};  // this lane's reduce-scatter passes, in its order
        double share = bytes / D;
        for (size_t j = 0; j < D; ++j) {
            const IciAxis& a = axes[(i + j) % D];
            rs[j] = (a.length - 1.0) / a.length * share;
            share /= a.length;
        }
        size_t p = 0;
        if (passes != Passes::all_gather)
            for (size_t j = 0; j < D; ++j, ++p) left[i][p] = rs[j], axis[i][p] = (i + j) % D;
        if (passes != Passes::reduce_scatter)
            for (size_t j = D; j-- > 0; ++p) left[i][p] = rs[j], axis[i][p] = (i + j) % D;
    }
    std::array<size_t, kMaxAxes> at{};  // each lane's current pass
    double t = 0;
    for (;;) {
        std::array<int, kMaxAxes> on{};  // lanes on each axis
        for (size_t i = 0; i < D; ++i)
            if (at[i] < P) ++on[axis[i][at[i]]];
        double dt = std::numeric_limits<double>::infinity();
        for (size_t i = 0; i < D; ++i)
            if (at[i] < P) {
                const size_t k = axis[i][at[i]];
                dt = std::min(dt, left[i][at[i]] * on[k] / axes[k].bytes_per_s);
            }
        if (!std::isfinite(dt)) return t;
        t += dt;
        for (size_t i = 0; i < D; ++i)
            if (at[i] < P) {
                const size_t k = axis[i][at[i]];
                left[i][at[i]] -= dt * axes[k].bytes_per_s / on[k];
                if (left[i][at[i]] <= 1e-12 * bytes) ++at[i];
            }
    }
}

// The ring passes, hierarchical: level l moves the data left after the inner levels, bytes / prod(inner sizes),
// with (n-1)/n of it crossing its links per pass (ring; Thakur et al. 2005, eq. for ring allgather). A level of
// several torus axes is a multi-ring, timed lane by lane (multi_ring_s).
double ring_passes_s(double bytes, const GroupNetwork& net, Passes passes) {
    const double count = passes == Passes::all_reduce ? 2 : 1;
    double t = 0, share = bytes;
    for (const auto& l : net.levels) {
        if (l.size > 1) {
            const bool multi = l.kind == LevelKind::ici && l.ici_axes.size() > 1 && l.ici_axes.size() <= kMaxRingAxes &&
                               std::all_of(l.ici_axes.begin(), l.ici_axes.end(),
                                           [](const IciAxis& a) { return a.bytes_per_s > 0; });
            t += (multi ? multi_ring_s(share, l.ici_axes, passes)
                        : count * (l.size - 1.0) / l.size * share / l.bytes_per_s) +
                 count * l.steps * l.latency_s;
        }
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
    return net.levels.size() == 2 && net.levels[0].kind == LevelKind::nvlink && net.levels[0].size > 1;
}

Algorithm ring_algorithm(const GroupNetwork& net) {
    if (net.levels.size() == 1 && net.levels[0].kind == LevelKind::ici)
        return net.levels[0].axes > 1 ? Algorithm::multi_ring : Algorithm::bidirectional_ring;
    if (net.levels.size() > 1) return Algorithm::hierarchical_ring;
    return Algorithm::ring;
}

// All-reduce with in-network reduction where a level has it, pipelined across levels as NCCL's NVLSTree and
// CollNet are (chunks flow through the levels at once, so the slowest level sets the rate): level l works on the
// share left after the inner levels; a level with a reduction unit sends that share up once and gets the result
// back once, (n+1)/n x share / reduce_bytes_per_s (the switch reduces; NVLS adds the GPU's own chunk); a level
// without runs a ring reduce-scatter + all-gather on it (the flow lowering follows the same split, one lane per
// level). Latencies add. Algorithm::none when no level reduces in the network.
CollectiveCost in_network_all_reduce(double bytes, const GroupNetwork& net) {
    double slowest = 0, lat = 0, share = bytes;
    bool nvls = false, collnet = false;
    for (const auto& l : net.levels) {
        if (l.size <= 1) continue;
        if (l.reduce_bytes_per_s > 0) {
            slowest = std::max(slowest, (l.size + 1.0) / l.size * share / l.reduce_bytes_per_s);
            lat += 2 * l.latency_s;
            (l.kind == LevelKind::nvlink ? nvls : collnet) = true;
        } else {
            slowest = std::max(slowest, 2 * (l.size - 1.0) / l.size * share / l.bytes_per_s);
            lat += 2 * l.steps * l.latency_s;
        }
        share /= l.size;
    }
    if (collnet) return priced(slowest + lat, Algorithm::collnet);
    if (nvls) return priced(slowest + lat, net.levels.size() > 1 ? Algorithm::nvls_tree : Algorithm::nvls);
    return priced(0.0, Algorithm::none);
}

}  // namespace

TorusAllToAll torus_all_to_all(double bytes, const NetLevel& level) {
    // Dimension-ordered routes: a message first moves along axis 0, then 1, ... Summed over all sources and
    // destinations, the traffic on one line of axis k is that of a one-axis all-to-all of the same `bytes` per rank
    // among its `length` members (each of the N / L_k sources that route through the line brings 1/N of its data
    // for each of the L_k positions). On one axis of L members, q = bytes / L to each:
    //   ring (shorter way round, ties split): each link, each way, carries q x L^2 / 8 (L even; (L^2 - 1) / 8 odd);
    //   line: the middle link carries q x floor(L/2) x ceil(L/2) each way.
    // Interleaved instances (stride s) put s groups' traffic on every physical link between members.
    TorusAllToAll out;
    double busiest = 0;
    for (const auto& a : level.ici_axes) {
        if (a.length <= 1) continue;
        const double L = a.length;
        const double per_link = a.ring ? (L * L - (a.length % 2)) / (8 * L) : std::floor(L / 2) * std::ceil(L / 2) / L;
        busiest = std::max(busiest, bytes * per_link * a.stride);
        out.hops += (a.ring ? a.length / 2 : a.length - 1) * a.stride;
    }
    out.busiest_link_s = busiest / level.link_bytes_per_s;
    return out;
}

CollectiveCost collective_cost(Collective c, double bytes, const GroupNetwork& net) {
    if (net.size() <= 1 || bytes <= 0) return priced(0.0, Algorithm::none);
    // One reduce-scatter or all-gather pass: hierarchical, or for two-level GPU groups the flat ring when faster
    // (NCCL's tuner picks by the same bandwidths).
    // For an all-reduce, both passes (reduce-scatter then all-gather).
    const Passes passes = c == Collective::reduce_scatter ? Passes::reduce_scatter
                          : c == Collective::all_gather   ? Passes::all_gather
                                                          : Passes::all_reduce;
    CollectiveCost pass = priced(ring_passes_s(bytes, net, passes), ring_algorithm(net));
    if (two_level_gpu(net)) {
        const double flat = flat_ring_pass_s(bytes, net) * (passes == Passes::all_reduce ? 2 : 1);
        if (flat < pass.time_s) pass = priced(flat, Algorithm::flat_ring);
    }
    switch (c) {
        case Collective::reduce_scatter:
        case Collective::all_gather: return pass;
        case Collective::all_reduce: {
            // Ring: reduce-scatter + all-gather. Tree for small messages: a binary tree reduce then broadcast over
            // each level, 2 ceil(log2 n) steps of the whole buffer (not pipelined). In-network reduction where a
            // level has it (NVLS, SHARP). Take the fastest, as NCCL's tuner does by the same bandwidths.
            CollectiveCost best = pass;
            double tree = 0;
            for (const auto& l : net.levels)
                tree += 2 * std::ceil(std::log2(std::max(2, l.size))) * (l.latency_s + bytes / l.bytes_per_s);
            if (tree < best.time_s) best = priced(tree, Algorithm::tree);
            const CollectiveCost in_net = in_network_all_reduce(bytes, net);
            if (in_net.kind != Algorithm::none && in_net.time_s < best.time_s) best = in_net;
            return best;
        }
        case Collective::all_to_all: {
            // Each member sends bytes/n to every other member, all at once, and every instance of the group does
            // the same. Level l carries what leaves the members inside it: the share of destinations beyond the
            // inner levels that this level reaches. The levels run at once (NVLink and the NICs, ICI and DCN), so the
            // slowest sets the time. On a torus it is the busiest link of the routes (torus_all_to_all).
            const double n = net.size();
            double t = 0, inner = 1, lat_gpu = 0, lat_tpu = 0;
            for (const auto& l : net.levels) {
                const double beyond = (n - inner) / n;                  // destinations outside the inner levels
                const double here = beyond - (n - inner * l.size) / n;  // ... that this level reaches
                if (l.kind == LevelKind::ici && !l.ici_axes.empty()) {
                    const auto [busy_s, hops] = torus_all_to_all(bytes * l.size / n, l);
                    t = std::max(t, busy_s);
                    lat_tpu = std::max(lat_tpu, hops * l.latency_s);
                } else {
                    t = std::max(t, bytes * here / l.bytes_per_s);
                    // A message crosses each level once on its way (GPU: NVLink then the NICs); ICI and DCN
                    // routes are disjoint (a DCN message leaves through the host).
                    if (l.kind == LevelKind::dcn) lat_tpu = std::max(lat_tpu, l.latency_s);
                    else lat_gpu += l.latency_s;
                }
                inner *= l.size;
            }
            return priced(t + lat_gpu + lat_tpu, Algorithm::all_to_all);
        }
        case Collective::send_recv: return p2p_cost(bytes, net.levels.back());
    }
    return priced(0.0, Algorithm::none);
}

}  // namespace podsim
