#include "hardware/network_graph.hpp"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <stdexcept>
#include <unordered_map>

namespace podsim {

namespace {
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property,
                                    boost::property<boost::edge_index_t, uint32_t>>;
}

struct NetworkGraph::Cache {
    // route() may be called from several threads (one graph shared by a CollectiveTimer's users). The routes map
    // only grows, and its nodes do not move, so a route handed out stays valid after the lock is released.
    std::mutex mutex;
    Graph g;
    bool built = false;
    std::unordered_map<uint64_t, std::vector<uint32_t>> routes;
    std::unordered_map<uint32_t, std::vector<uint32_t>> pred_link;  // per source node: link into each node
};

NetworkGraph::NetworkGraph() : cache_(std::make_unique<Cache>()) {}
NetworkGraph::~NetworkGraph() = default;
NetworkGraph::NetworkGraph(NetworkGraph&&) noexcept = default;
NetworkGraph& NetworkGraph::operator=(NetworkGraph&&) noexcept = default;

uint32_t NetworkGraph::add_node(std::string name) {
    node_names.push_back(std::move(name));
    cache_->built = false;
    return static_cast<uint32_t>(node_names.size() - 1);
}

void NetworkGraph::add_link(uint32_t a, uint32_t b, double bw, double lat, const std::string& name) {
    links.push_back({a, b, bw, lat, name});
    cache_->built = false;
}

void NetworkGraph::add_duplex(uint32_t a, uint32_t b, double bw, double lat, const std::string& name) {
    add_link(a, b, bw, lat, name + ">");
    add_link(b, a, bw, lat, name + "<");
}

double NetworkGraph::path_bytes_per_s(const std::vector<uint32_t>& r) const {
    double bw = 1e300;
    for (uint32_t l : r) bw = std::min(bw, links[l].bytes_per_s);
    return bw;
}

const std::vector<uint32_t>& NetworkGraph::route(uint32_t chip_a, uint32_t chip_b) const {
    const uint32_t a = chip_node.at(chip_a), b = chip_node.at(chip_b);
    const uint64_t key = (uint64_t(a) << 32) | b;
    std::lock_guard lock(cache_->mutex);
    auto it = cache_->routes.find(key);
    if (it != cache_->routes.end()) return it->second;
    std::vector<uint32_t> path;
    if (direct_route) direct_route(chip_a, chip_b, path);
    else path = bfs_path(a, b);
    return cache_->routes.emplace(key, std::move(path)).first->second;
}

std::vector<uint32_t> NetworkGraph::bfs_route(uint32_t chip_a, uint32_t chip_b) const {
    std::lock_guard lock(cache_->mutex);
    return bfs_path(chip_node.at(chip_a), chip_node.at(chip_b));
}

std::vector<uint32_t> NetworkGraph::bfs_path(uint32_t a, uint32_t b) const {
    // Caller holds the mutex.
    if (!cache_->built) {
        cache_->g = Graph(node_names.size());
        for (uint32_t i = 0; i < links.size(); ++i) boost::add_edge(links[i].src, links[i].dst, i, cache_->g);
        cache_->built = true;
        cache_->pred_link.clear();
    }
    auto pit = cache_->pred_link.find(a);
    if (pit == cache_->pred_link.end()) {
        // A bounded number of search trees are kept (callers ask source by source), not one per chip.
        if (cache_->pred_link.size() >= 64) cache_->pred_link.clear();
        std::vector<uint32_t> pred(node_names.size(), UINT32_MAX);
        auto eidx = boost::get(boost::edge_index, cache_->g);
        struct Recorder : boost::default_bfs_visitor {
            std::vector<uint32_t>* pred;
            decltype(eidx) idx;
            void tree_edge(Graph::edge_descriptor e, const Graph&) const { (*pred)[boost::target(e, Graph())] = idx[e]; }
        };
        Recorder rec;
        rec.pred = &pred;
        rec.idx = eidx;
        boost::breadth_first_search(cache_->g, boost::vertex(a, cache_->g), boost::visitor(rec));
        pit = cache_->pred_link.emplace(a, std::move(pred)).first;
    }
    std::vector<uint32_t> path;
    for (uint32_t n = b; n != a;) {
        const uint32_t l = pit->second[n];
        if (l == UINT32_MAX) throw std::logic_error("no route from " + node_names[a] + " to " + node_names[b]);
        path.push_back(l);
        n = links[l].src;
    }
    std::reverse(path.begin(), path.end());
    return path;
}

namespace {

// Dimension-ordered routing on TPU tori (the ICI routes along axis 0, then 1, ...): on each axis the shorter way
// round where it wraps, a tie (half-way round) split by the source's parity so both directions carry half;
// between slices, chip -> host -> DCN -> host -> chip. Every route is a shortest path, as BFS's; BFS breaks ties
// by link order, which sends every half-way message the same way and loads one direction twice (an all-to-all
// on an 8x8 torus took 2.8x its balanced time).
struct TorusLinks {
    std::vector<int> dims;
    std::vector<bool> wraps;
    int per_slice = 0, chips_per_host = 1;
    std::vector<uint32_t> plus, minus;  // [chip * axes + axis]
    std::vector<uint32_t> pcie_up;      // chip -> host (+1: host -> chip), per chip in slice order
    std::vector<uint32_t> dcn_up;       // host -> dcn (+1: dcn -> host), per host

    void route(uint32_t a, uint32_t b, std::vector<uint32_t>& path) const {
        const size_t D = dims.size();
        if (a / per_slice != b / per_slice) {
            const uint32_t ha = a / chips_per_host, hb = b / chips_per_host;
            path = {pcie_up[a], dcn_up[ha], dcn_up[hb] + 1, pcie_up[b] + 1};
            return;
        }
        uint32_t cur = a;
        uint32_t ia = a % per_slice, ib = b % per_slice;
        uint32_t mul = 1;
        for (size_t k = 0; k < D; ++k) {
            const int L = dims[k];
            const int ca = static_cast<int>(ia % L), cb = static_cast<int>(ib % L);
            ia /= L, ib /= L;
            if (ca != cb) {
                int steps = 0;
                bool up = cb > ca;
                if (wraps[k]) {
                    const int fwd = (cb - ca + L) % L, back = L - fwd;
                    up = fwd < back || (fwd == back && ca % 2 == 0);
                    steps = up ? fwd : back;
                } else {
                    steps = std::abs(cb - ca);
                }
                for (int s = 0, c = ca; s < steps; ++s) {
                    path.push_back((up ? plus : minus)[size_t(cur) * D + k]);
                    const int next = up ? (c + 1) % L : (c + L - 1) % L;
                    cur = static_cast<uint32_t>(cur + (static_cast<long long>(next) - c) * mul);
                    c = next;
                }
            }
            mul *= L;
        }
    }
};

NetworkGraph build_tpu(const SystemSpec& sys) {
    NetworkGraph g;
    g.kind = "tpu-torus";
    const auto& chip = sys.chip;
    const auto& rules = *chip.tpu;
    const double ici = chip.ici_link_bytes_per_s * chip.eff.collective_bw_fraction;
    const auto& dims = sys.torus_dims;
    const int per_slice = sys.chips_per_slice();
    const uint32_t dcn = sys.slices > 1 ? g.add_node("dcn") : 0;
    // Link ids for dimension-ordered routing: per chip (global rank) and axis, the link to the next chip (+) and
    // to the previous one (-); per chip its PCIe links to and from its host; per host its DCN links.
    const size_t D = dims.size();
    auto t = std::make_shared<TorusLinks>();
    t->dims = dims, t->wraps = sys.wraps, t->per_slice = per_slice, t->chips_per_host = rules.chips_per_host;
    t->plus.assign(size_t(per_slice) * sys.slices * D, UINT32_MAX);
    t->minus = t->plus;
    for (int s = 0; s < sys.slices; ++s) {
        std::vector<uint32_t> ids(per_slice);
        for (int i = 0; i < per_slice; ++i) {
            ids[i] = g.add_node("s" + std::to_string(s) + ".chip" + std::to_string(i));
            g.chip_node.push_back(ids[i]);
        }
        // Linear index with the first dimension fastest: rank order of the innermost parallel groups.
        auto coord = [&](int i) {
            std::vector<int> c;
            for (int d : dims) c.push_back(i % d), i /= d;
            return c;
        };
        auto index = [&](const std::vector<int>& c) {
            int i = 0, mul = 1;
            for (size_t k = 0; k < dims.size(); ++k) i += c[k] * mul, mul *= dims[k];
            return i;
        };
        const size_t longest = std::max_element(dims.begin(), dims.end()) - dims.begin();
        for (int i = 0; i < per_slice; ++i) {
            const auto c = coord(i);
            for (size_t k = 0; k < dims.size(); ++k) {
                if (dims[k] == 1) continue;
                auto n = c;
                const bool at_end = c[k] + 1 == dims[k];
                if (at_end && !sys.wraps[k]) continue;
                n[k] = (c[k] + 1) % dims[k];
                if (at_end && sys.twisted && k == longest && dims.size() >= 2) {
                    // Twisted wraparound (Jouppi et al. 2023, TPU v4, sec. 2.4): the long axis closes with a shift
                    // of half the first axis, shortening the worst-case hop count.
                    const size_t o = k == 0 ? 1 : 0;
                    n[o] = (c[o] + dims[o] / 2) % dims[o];
                }
                const auto fwd = static_cast<uint32_t>(g.links.size());
                const size_t from = size_t(s) * per_slice + i, to = size_t(s) * per_slice + index(n);
                t->plus[from * D + k] = fwd;
                // On an axis of two that wraps, the second link pair doubles the first: routes use the first.
                if (t->minus[to * D + k] == UINT32_MAX) t->minus[to * D + k] = fwd + 1;
                g.add_duplex(ids[i], ids[index(n)], ici, chip.ici_hop_latency_s,
                             "ici.s" + std::to_string(s) + "." + std::to_string(i) + ".d" + std::to_string(k));
            }
        }
        if (sys.slices > 1) {
            const int hosts = per_slice / rules.chips_per_host;
            const double host_bw = rules.dcn_effective_bytes_per_s_per_chip(sys.slices) * rules.chips_per_host;
            for (int h = 0; h < hosts; ++h) {
                const uint32_t host = g.add_node("s" + std::to_string(s) + ".host" + std::to_string(h));
                t->dcn_up.push_back(static_cast<uint32_t>(g.links.size()));
                g.add_duplex(host, dcn, host_bw, rules.dcn_latency_s / 2, "dcn.s" + std::to_string(s) + ".h" + std::to_string(h));
                // Chips reach their host over PCIe, which is not the bottleneck for DCN traffic.
                for (int k = 0; k < rules.chips_per_host; ++k) {
                    t->pcie_up.push_back(static_cast<uint32_t>(g.links.size()));
                    g.add_duplex(ids[h * rules.chips_per_host + k], host, 4 * host_bw, 0,
                                 "pcie.s" + std::to_string(s) + ".h" + std::to_string(h) + "." + std::to_string(k));
                }
            }
        }
    }
    // Twisted wraparound shifts another axis on the long one's wrap: left to BFS.
    if (!sys.twisted) g.direct_route = [t](uint32_t a, uint32_t b, std::vector<uint32_t>& path) { t->route(a, b, path); };
    return g;
}

// Routing on GPU rail fat trees, the paths BFS finds (tests/test_network.cpp compares every pair on HGX layouts; on
// multi-node NVLink domains one tie is broken otherwise, see route(), and the test checks lengths): inside an NVLink
// domain over the NVSwitch; otherwise over the NIC rails. A message to a GPU on the sender's rail goes NIC -> leaf
// (-> spine -> leaf) -> NIC; to another rail it first crosses NVLink to the domain's first GPU on that rail in rank
// order (one in the destination's pod if any: PXN-like), as BFS explores the NVSwitch before the NIC.
struct RailLinks {
    int G = 8, R = 8, nodes_per_domain = 1, nodes_per_leaf = 1;
    std::vector<uint32_t> nvl_up;     // gpu -> nvswitch (+1: back), per GPU
    std::vector<uint32_t> pcie_up;    // gpu -> nic (+1: back), per GPU
    std::vector<uint32_t> rail_up;    // nic -> leaf (+1: back), per node x rail
    std::vector<uint32_t> uplink_up;  // leaf -> spine (+1: back), per rail x pod
    int pods = 1;

    int rail(uint32_t gpu) const { return static_cast<int>(gpu % G) * R / G; }
    int pod(uint32_t gpu) const { return static_cast<int>(gpu / G) / nodes_per_leaf; }
    // Links from the NIC of `from` to the GPU `to` on the same rail.
    void across(uint32_t from, uint32_t to, std::vector<uint32_t>& path) const {
        const int r = rail(from);
        path.push_back(pcie_up[from]);
        path.push_back(rail_up[size_t(from / G) * R + r]);
        if (pod(from) != pod(to)) {
            path.push_back(uplink_up[size_t(r) * pods + pod(from)]);
            path.push_back(uplink_up[size_t(r) * pods + pod(to)] + 1);
        }
        path.push_back(rail_up[size_t(to / G) * R + r] + 1);
        path.push_back(pcie_up[to] + 1);
    }
    // The first GPU in rank order of the domain starting at `first`, on `rail` and not `skip`, with the fewest
    // links through it (6, or 8 when its pod is not `pod_there`), and that count; UINT32_MAX when none.
    std::pair<uint32_t, int> nearest(uint32_t first, int on_rail, uint32_t skip, int pod_there) const {
        std::pair<uint32_t, int> best{UINT32_MAX, 1 << 30};
        for (uint32_t g = first; g < first + uint32_t(G * nodes_per_domain); ++g) {
            if (rail(g) != on_rail || g == skip) continue;
            const int hops = 6 + 2 * (pod(g) != pod_there);
            if (hops < best.second) best = {g, hops};
            if (hops == 6) break;
        }
        return best;
    }
    void route(uint32_t a, uint32_t b, std::vector<uint32_t>& path) const {
        const uint32_t dom = G * nodes_per_domain;
        if (a / dom == b / dom) {
            path = {nvl_up[a], nvl_up[b] + 1};
            return;
        }
        const int rb = rail(b);
        // The sender's own rail: 4 links (6 across pods). Through a GPU of a's domain on b's rail: 2 more. Over
        // the sender's rail to a GPU of b's domain, then NVLink there (multi-node domains: NVL72): 2 more too.
        const int own = rail(a) == rb ? 4 + 2 * (pod(a) != pod(b)) : 1 << 30;
        const auto [relay, via] = nearest(a / dom * dom, rb, a, pod(b));
        const auto [far, remote] = nearest(b / dom * dom, rail(a), b, pod(a));
        // Fewer links wins. On a tie the sender's own NIC when it is on b's rail: NCCL relays over NVLink (PXN)
        // to reach another rail, not to leave from another NIC of the same rail (on an NVL72 rack such a relay, in
        // b's pod, ties with the sender's route over the spine, and taking it sent three ring channels through one
        // NIC). Between rails, the NVSwitch first, then over the sender's rail and NVLink at the far end (the
        // order BFS explores them in).
        if (relay != UINT32_MAX && via < own && via <= remote) {
            path = {nvl_up[a], nvl_up[relay] + 1};
            return across(relay, b, path);
        }
        if (own <= remote) return across(a, b, path);
        if (far == UINT32_MAX) throw std::logic_error("no route between GPUs " + std::to_string(a) + " and " + std::to_string(b));
        across(a, far, path);
        path.push_back(nvl_up[far]);
        path.push_back(nvl_up[b] + 1);
    }
};

NetworkGraph build_gpu(const SystemSpec& sys) {
    NetworkGraph g;
    g.kind = "gpu-rail-fat-tree";
    const auto& chip = sys.chip;
    const auto& node = sys.node;
    const double nvl = chip.nvlink_bytes_per_s * chip.eff.collective_bw_fraction;
    const double nic = node.gpu_nic_bytes_per_s * node.network_efficiency;
    const int G = node.gpus_per_node, R = node.gpu_nics_per_node;
    const int pods = (sys.nodes + sys.nodes_per_leaf - 1) / sys.nodes_per_leaf;
    // One leaf per rail per pod; one spine per rail joining the pods, with uplinks cut by the oversubscription.
    std::vector<uint32_t> leaf(R * pods), spine(R);
    auto t = std::make_shared<RailLinks>();
    t->G = G, t->R = R, t->nodes_per_leaf = sys.nodes_per_leaf, t->pods = pods;
    t->uplink_up.assign(size_t(R) * pods, UINT32_MAX);
    for (int r = 0; r < R; ++r) {
        if (pods > 1) spine[r] = g.add_node("spine.r" + std::to_string(r));
        for (int p = 0; p < pods; ++p) {
            leaf[r * pods + p] = g.add_node("leaf.r" + std::to_string(r) + ".p" + std::to_string(p));
            if (pods > 1) {
                t->uplink_up[size_t(r) * pods + p] = static_cast<uint32_t>(g.links.size());
                g.add_duplex(leaf[r * pods + p], spine[r], sys.nodes_per_leaf * nic / sys.oversubscription,
                             0, "uplink.r" + std::to_string(r) + ".p" + std::to_string(p));
            }
        }
    }
    // One NVSwitch fabric per NVLink domain: a node on HGX, 18 trays of an NVL72 rack.
    const int nodes_per_domain = std::max(1, sys.domain_gpus() / G);
    t->nodes_per_domain = nodes_per_domain;
    uint32_t sw = 0;
    for (int n = 0; n < sys.nodes; ++n) {
        const std::string ns = "n" + std::to_string(n);
        if (n % nodes_per_domain == 0) sw = g.add_node("d" + std::to_string(n / nodes_per_domain) + ".nvswitch");
        std::vector<uint32_t> nics(R);
        for (int r = 0; r < R; ++r) {
            nics[r] = g.add_node(ns + ".nic" + std::to_string(r));
            t->rail_up.push_back(static_cast<uint32_t>(g.links.size()));
            g.add_duplex(nics[r], leaf[r * pods + n / sys.nodes_per_leaf], nic, node.network_latency_s / 2,
                         ns + ".rail" + std::to_string(r));
        }
        for (int k = 0; k < G; ++k) {
            const uint32_t gpu = g.add_node(ns + ".gpu" + std::to_string(k));
            g.chip_node.push_back(gpu);
            t->nvl_up.push_back(static_cast<uint32_t>(g.links.size()));
            g.add_duplex(gpu, sw, nvl, chip.nvlink_latency_s / 2, ns + ".nvlink" + std::to_string(k));
            // GPUDirect: the GPU reaches its NIC over PCIe (not the bottleneck); GPUs share NICs when R < G.
            t->pcie_up.push_back(static_cast<uint32_t>(g.links.size()));
            g.add_duplex(gpu, nics[k * R / G], 4 * nic, 0, ns + ".pcie" + std::to_string(k));
        }
    }
    g.direct_route = [t](uint32_t a, uint32_t b, std::vector<uint32_t>& path) { t->route(a, b, path); };
    return g;
}

}  // namespace

NetworkGraph build_network(const SystemSpec& sys) { return sys.is_gpu ? build_gpu(sys) : build_tpu(sys); }

}  // namespace podsim
