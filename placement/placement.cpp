#include "placement/placement.hpp"

#include <numeric>

namespace podsim {

const char* to_string(LevelKind k) {
    switch (k) {
        case LevelKind::generic: return "generic";
        case LevelKind::nvlink: return "nvlink";
        case LevelKind::scale_out: return "scale-out";
        case LevelKind::ici: return "ici";
        case LevelKind::dcn: return "dcn";
    }
    return "?";
}

const std::vector<ChoiceDoc>& level_kind_docs() {
    static const std::vector<ChoiceDoc> docs = {
        {to_string(LevelKind::generic), "a plain ring level: hierarchical ring or tree, no topology-specific algorithm",
         {{"size", "ranks at this level"},
          {"bytes_per_s", "one-direction bandwidth per rank, B/s"},
          {"latency_s", "per algorithm step, s"},
          {"steps", "ring steps of one reduce-scatter or all-gather pass"}}},
        {to_string(LevelKind::nvlink),
         "GPU: the members of a group inside one node, all-to-all over NVLink/NVSwitch; with a scale-out level "
         "outside it, the flat ring (one channel per member, each leaving on its own NIC) competes with the "
         "hierarchical ring, and node-deduplicated expert all-to-alls forward over it",
         {{"nvlink_bytes_per_s", "chip catalog: per GPU, one direction, B/s (x efficiency.collective_bw_fraction)"},
          {"nvlink_latency_s", "chip catalog: per step, s"}}},
        {to_string(LevelKind::scale_out),
         "GPU: the group's nodes over their NICs, one rail per GPU (a rail-optimized fat tree)",
         {{"gpu_nics_per_node", "system catalog: NICs carrying GPU traffic"},
          {"gpu_nic_bytes_per_s", "system catalog: per NIC, one direction, B/s (shared by the node's GPUs)"},
          {"network_efficiency", "system catalog: achievable fraction of the NIC rate"},
          {"network_latency_s", "system catalog: per message step across nodes, s"}}},
        {to_string(LevelKind::ici),
         "TPU: the torus axes a group spans inside a slice; one axis is a (bidirectional when wrapped) ring, "
         "several a multi-ring; an all-to-all crosses about steps/4 links",
         {{"axes", "torus axes the level spans"},
          {"wrapped_axes", "of them, whole wrapped axes (two links' worth; a line or partial axis gets one)"},
          {"ici_link_bytes_per_s", "chip catalog: per link, one direction, B/s (x efficiency.collective_bw_fraction)"},
          {"ici_hop_latency_s", "chip catalog: per hop, s"}}},
        {to_string(LevelKind::dcn), "TPU: the data-center network between slices (multislice), the outermost level",
         {{"dcn_bytes_per_s_per_chip", "chip catalog (tpu_slices): per chip, B/s"},
          {"dcn_latency_s", "chip catalog (tpu_slices): per message step, s"},
          {"dcn_contention_slices", "chip catalog (tpu_slices): slices sharing the fabric before each chip's share halves"}}},
    };
    return docs;
}

const std::vector<ChoiceDoc>& topology_docs() {
    static const std::vector<ChoiceDoc> docs = {
        {"tpu-torus",
         "TPU slices: chips on a 2D/3D torus of ICI links (wraparound where the slice shape has it), hosts of "
         "chips_per_host chips, slices joined over DCN; groups take whole torus axes in rank order, then slices",
         {{"torus_dims", "scenario system accelerator_type: the slice shape (e.g. v5p-128: 4x4x4)"},
          {"wraparound", "chip catalog (tpu_slices): which dimensions close into rings"},
          {"twisted", "scenario system: twisted torus wraparound (AxAx2A, Ax2Ax2A slices)"},
          {"slices", "scenario system: slices over DCN (multislice)"},
          {"chips_per_host", "chip catalog (tpu_slices): chips sharing a host's DCN NIC"}}},
        {"gpu-rail-fat-tree",
         "GPU nodes: an NVSwitch inside each node; GPU i of every node on NIC i, rail i, through leaf and spine "
         "switches; groups fill nodes in rank order",
         {{"gpus_per_node", "system catalog"},
          {"gpu_nics_per_node", "system catalog: one rail per NIC"},
          {"nodes_per_leaf", "scenario system: nodes under one leaf switch per rail (default 32, a DGX SuperPOD unit)"},
          {"oversubscription", "scenario system: leaf-to-spine oversubscription (default 1, full bisection)"}}},
    };
    return docs;
}

int GroupNetwork::size() const {
    int n = 1;
    for (const auto& l : levels) n *= l.size;
    return n;
}

std::string GroupNetwork::describe() const {
    if (levels.empty()) return "none";
    std::string s;
    for (const auto& l : levels) s += (s.empty() ? "" : " + ") + l.name + " x" + std::to_string(l.size);
    return s;
}

namespace {

long long product(const std::vector<int>& v, size_t end) {
    long long p = 1;
    for (size_t i = 0; i < end && i < v.size(); ++i) p *= v[i];
    return p;
}

NetLevel nvlink_level(const SystemSpec& sys, int n) {
    NetLevel l{n, sys.chip.nvlink_bytes_per_s * sys.chip.eff.collective_bw_fraction, sys.chip.nvlink_latency_s, n - 1,
               "NVLink", LevelKind::nvlink};
    if (sys.node.nvlink_sharp) l.reduce_bytes_per_s = sys.chip.nvlink_bytes_per_s * sys.node.nvls_bw_fraction;
    return l;
}

NetLevel nic_level(const SystemSpec& sys, int n) {
    // Each member of the group in a node drives its own NIC share (rail); the outer ring carries 1/per_node of the data.
    NetLevel l{n, sys.node.nic_bytes_per_s_per_gpu() * sys.node.network_efficiency, sys.node.network_latency_s, n - 1,
               sys.node.network, LevelKind::scale_out};
    if (sys.node.network_sharp) l.reduce_bytes_per_s = sys.node.nic_bytes_per_s_per_gpu() * sys.node.sharp_bw_fraction;
    return l;
}

struct AxisUse {
    int length;     // members along this axis
    int stride;     // spacing between members on the axis
    bool wrap;      // the ring closes (whole wrapped axis)
    // The members, strided, still span the whole wrapped axis, so shortest routes go round it. (The ring
    // collectives price a strided sub-ring as a line, `wrap` false; the route-load pricing of all-to-all uses this.)
    bool covers_axis_ring;
};

// Lays groups on torus axes in order; returns the per-group axis uses and the part left for DCN.
struct TpuPlacement {
    std::vector<std::vector<AxisUse>> ici;
    std::vector<int> dcn;  // members across slices, per group
    bool ok = true;
    std::string why_not;
};

TpuPlacement place_tpu(const SystemSpec& sys, const std::vector<int>& sizes) {
    TpuPlacement p;
    p.ici.resize(sizes.size());
    p.dcn.assign(sizes.size(), 1);
    std::vector<int> remaining = sys.torus_dims;  // unused length of each axis
    size_t axis = 0;
    int slices_left = sys.slices;
    for (size_t g = 0; g < sizes.size(); ++g) {
        int n = sizes[g];
        while (n > 1 && axis < remaining.size()) {
            int r = remaining[axis];
            if (r == 1) { ++axis; continue; }
            int f = std::gcd(n, r);
            if (f == 1) { ++axis; continue; }
            const int full = sys.torus_dims[axis];
            const int stride = full / r;
            const bool whole = (f == full);
            p.ici[g].push_back({f, stride, whole && sys.wraps[axis], f * stride == full && sys.wraps[axis]});
            remaining[axis] = r / f;
            n /= f;
            if (remaining[axis] == 1) ++axis;
        }
        if (n > 1) {
            if (slices_left % n == 0) {
                p.dcn[g] = n;
                slices_left /= n;
            } else {
                p.ok = false;
                p.why_not = "a group of " + std::to_string(sizes[g]) + " does not map onto the " +
                            std::to_string(sys.torus_dims.size()) + "D torus of " + sys.label +
                            " (whole axes, then DCN slices)";
                return p;
            }
        }
    }
    return p;
}

// GPUs fill nodes, and nodes NVLink domains, in rank order. The members of group `which` that share a domain:
// the largest divisor m of the group's size whose block of ranks (stride x m) tiles the domain evenly, so that every
// domain holds the same number of members (a group that straddles domains unevenly keeps only the aligned part on
// NVLink; the rest goes over the NICs, as a hierarchical collective needs equal parts).
int gpu_members_per_domain(const SystemSpec& sys, const std::vector<int>& sizes, size_t which) {
    const long long stride = product(sizes, which);
    const long long D = sys.domain_gpus();
    const int n = sizes.at(which);
    if (stride >= D) return 1;
    int best = 1;
    for (int m = 2; m <= n; ++m)
        if (n % m == 0 && D % (stride * m) == 0) best = m;
    return best;
}

// Whether the members of group `which` inside one domain sit on more than one VM/node (NVLink across VMs: an
// NVL72 rack of 4-GPU trays).
bool domain_part_spans_nodes(const SystemSpec& sys, const std::vector<int>& sizes, size_t which, int per_domain) {
    return product(sizes, which) * per_domain > sys.node.gpus_per_node;
}

}  // namespace

bool inside_one_nvlink_domain(const SystemSpec& sys, const std::vector<int>& sizes, size_t which) {
    return !sys.is_gpu || gpu_members_per_domain(sys, sizes, which) == sizes.at(which);
}

GroupShape group_shape(const SystemSpec& sys, const std::vector<int>& sizes, size_t which) {
    GroupShape s;
    const int n = sizes.at(which);
    if (n <= 1) return s;
    if (sys.is_gpu) {
        const int per_domain = gpu_members_per_domain(sys, sizes, which);
        // The graph's links run at the ring's rates (network_graph.cpp); in-network reductions at their own.
        const NetLevel nv = nvlink_level(sys, per_domain), nic = nic_level(sys, n / per_domain);
        auto scale = [](const NetLevel& l) { return l.reduce_bytes_per_s > 0 ? l.bytes_per_s / l.reduce_bytes_per_s : 0.0; };
        if (per_domain > 1) s.dims.push_back({per_domain, false, false, true, false, scale(nv)});
        if (n / per_domain > 1) s.dims.push_back({n / per_domain, false, false, false, false, scale(nic)});
        return s;
    }
    auto p = place_tpu(sys, sizes);
    if (!p.ok) return s;
    for (const auto& u : p.ici[which]) s.dims.push_back({u.length, u.wrap && u.length > 2, false, false, true});
    if (p.dcn[which] > 1) s.dims.push_back({p.dcn[which], false, true, false, false});
    return s;
}

std::vector<std::vector<uint32_t>> group_instances(const std::vector<int>& sizes, size_t which) {
    long long total = 1;
    for (int x : sizes) total *= x;
    const long long stride = product(sizes, which);
    const int n = sizes.at(which);
    std::vector<std::vector<uint32_t>> out;
    for (long long r = 0; r < total; ++r) {
        if ((r / stride) % n != 0) continue;  // r is the first member of its group
        std::vector<uint32_t> members(n);
        for (int m = 0; m < n; ++m) members[m] = static_cast<uint32_t>(r + m * stride);
        out.push_back(std::move(members));
    }
    return out;
}

GroupNetwork place_group(const SystemSpec& sys, const std::vector<int>& sizes, size_t which) {
    GroupNetwork gn;
    const int n = sizes.at(which);
    if (n <= 1) return gn;
    if (sys.is_gpu) {
        const int per_domain = gpu_members_per_domain(sys, sizes, which);
        const int across = n / per_domain;
        if (per_domain > 1) {
            NetLevel l = nvlink_level(sys, per_domain);
            if (domain_part_spans_nodes(sys, sizes, which, per_domain))
                l.name = "NVLink across " + std::string(sys.node.provider == "gcp" ? "VMs" : "nodes") + " (domain of " +
                         std::to_string(sys.domain_gpus()) + ")";
            gn.levels.push_back(l);
        }
        if (across > 1) gn.levels.push_back(nic_level(sys, across));
        return gn;
    }
    auto p = place_tpu(sys, sizes);
    if (!p.ok) {
        gn.placeable = false;
        gn.why_not = p.why_not;
        return gn;
    }
    const auto& uses = p.ici[which];
    if (!uses.empty()) {
        int members = 1, steps = 0, wrapped = 0;
        double bw = 0;
        std::vector<IciAxis> axes_used;
        for (const auto& u : uses) {
            members *= u.length;
            // A wrapped ring sends both ways on two links; a line (or a partial axis) gets one link's worth;
            // a strided sub-ring shares each link with the groups interleaved with it.
            double axis_bw = (u.wrap ? 2.0 : 1.0) * sys.chip.ici_link_bytes_per_s / u.stride;
            // Two members: one message each way, on a single link between neighbours; strided round a wrapped
            // axis the two routes are half-way round, split by the sender's parity (hardware/network_graph.cpp), so
            // the interleaved groups use both directions: each link carries stride / 2 of them (strides are even:
            // wrapped axes are multiples of 4). Twisted tori route by BFS, which sends every tie the same way.
            const bool both_ways = u.covers_axis_ring && u.stride > 1 && !sys.twisted;
            if (u.length == 2) axis_bw = (both_ways ? 2.0 : 1.0) * sys.chip.ici_link_bytes_per_s / u.stride;
            bw += axis_bw;
            axes_used.push_back({u.length, u.stride, u.length > 2 && u.covers_axis_ring,
                                 axis_bw * sys.chip.eff.collective_bw_fraction});
            steps += u.length - 1;
            wrapped += u.wrap;
        }
        const int axes = static_cast<int>(uses.size());
        std::string name = "ICI " + std::to_string(axes) + (axes == 1 ? " axis " : " axes ") +
                           (wrapped == axes ? "torus" : wrapped ? "torus/mesh" : "mesh");
        gn.levels.push_back({members, bw * sys.chip.eff.collective_bw_fraction, sys.chip.ici_hop_latency_s,
                             std::max(1, steps), name, LevelKind::ici, axes, wrapped});
        gn.levels.back().ici_axes = std::move(axes_used);
        gn.levels.back().link_bytes_per_s = sys.chip.ici_link_bytes_per_s * sys.chip.eff.collective_bw_fraction;
    }
    if (p.dcn[which] > 1) {
        const auto& r = *sys.chip.tpu;
        gn.levels.push_back({p.dcn[which], r.dcn_effective_bytes_per_s_per_chip(sys.slices), r.dcn_latency_s, p.dcn[which] - 1, "DCN",
                             LevelKind::dcn});
    }
    return gn;
}

NetLevel neighbour_link(const SystemSpec& sys, const std::vector<int>& sizes, size_t which) {
    GroupNetwork gn = place_group(sys, sizes, which);
    if (gn.levels.empty()) return {1, 0, 0, 0, "none"};
    // Neighbouring stages talk over the outermost level the group spans; on ICI that is one link, not the
    // sum over the axes a collective would use.
    NetLevel l = gn.levels.back();
    if (l.kind == LevelKind::ici)
        l.bytes_per_s = sys.chip.ici_link_bytes_per_s * sys.chip.eff.collective_bw_fraction;
    return l;
}

}  // namespace podsim
