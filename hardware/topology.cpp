#include "hardware/topology.hpp"

#include <numeric>

namespace podsim {

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
    return {n, sys.chip.nvlink_bytes_per_s * sys.chip.eff.collective_bw_fraction, sys.chip.nvlink_latency_s, n - 1,
            "NVLink"};
}

NetLevel nic_level(const SystemSpec& sys, int n) {
    // Each member of the group in a node drives its own NIC share (rail); the outer ring carries 1/per_node of the data.
    return {n, sys.node.nic_bytes_per_s_per_gpu() * sys.node.network_efficiency, sys.node.network_latency_s, n - 1,
            sys.node.network};
}

struct AxisUse {
    int length;     // members along this axis
    int stride;     // spacing between members on the axis
    bool wrap;      // the ring closes (whole wrapped axis)
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
            p.ici[g].push_back({f, stride, whole && sys.wraps[axis]});
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

// GPUs fill nodes in rank order: members of group `which` that share a node (its stride below the node size).
int gpu_members_per_node(const SystemSpec& sys, const std::vector<int>& sizes, size_t which) {
    const long long stride = product(sizes, which);
    const int G = sys.node.gpus_per_node;
    return stride >= G ? 1 : static_cast<int>(std::min<long long>(sizes.at(which), G / stride));
}

}  // namespace

GroupShape group_shape(const SystemSpec& sys, const std::vector<int>& sizes, size_t which) {
    GroupShape s;
    const int n = sizes.at(which);
    if (n <= 1) return s;
    if (sys.is_gpu) {
        const int per_node = gpu_members_per_node(sys, sizes, which);
        if (per_node > 1) s.dims.push_back({per_node, false, false, true, false});
        if (n / per_node > 1) s.dims.push_back({n / per_node, false, false, false, false});
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
        const int per_node = gpu_members_per_node(sys, sizes, which);
        const int across = (n + per_node - 1) / per_node;
        if (per_node > 1) gn.levels.push_back(nvlink_level(sys, per_node));
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
        for (const auto& u : uses) {
            members *= u.length;
            // A wrapped ring sends both ways on two links; a line (or a partial axis) gets one link's worth;
            // a strided sub-ring shares each link with the groups interleaved with it.
            double axis_bw = (u.wrap ? 2.0 : 1.0) * sys.chip.ici_link_bytes_per_s / u.stride;
            if (u.length == 2) axis_bw = sys.chip.ici_link_bytes_per_s / u.stride;
            bw += axis_bw;
            steps += u.length - 1;
            wrapped += u.wrap;
        }
        std::string name = "ICI " + std::to_string(uses.size()) + (uses.size() == 1 ? " axis " : " axes ") +
                           (wrapped == static_cast<int>(uses.size()) ? "torus" : wrapped ? "torus/mesh" : "mesh");
        gn.levels.push_back({members, bw * sys.chip.eff.collective_bw_fraction, sys.chip.ici_hop_latency_s,
                             std::max(1, steps), name});
    }
    if (p.dcn[which] > 1) {
        const auto& r = *sys.chip.tpu;
        gn.levels.push_back({p.dcn[which], r.dcn_bytes_per_s_per_chip, r.dcn_latency_s, p.dcn[which] - 1, "DCN"});
    }
    return gn;
}

NetLevel neighbour_link(const SystemSpec& sys, const std::vector<int>& sizes, size_t which) {
    GroupNetwork gn = place_group(sys, sizes, which);
    if (gn.levels.empty()) return {1, 0, 0, 0, "none"};
    // Neighbouring stages talk over the outermost level the group spans; on ICI that is one link, not the
    // sum over the axes a collective would use.
    NetLevel l = gn.levels.back();
    if (!sys.is_gpu && l.name.rfind("ICI", 0) == 0)
        l.bytes_per_s = sys.chip.ici_link_bytes_per_s * sys.chip.eff.collective_bw_fraction;
    return l;
}

}  // namespace podsim
