#include "sim/network_backend.hpp"

#include <cmath>
#include <algorithm>
#include <set>

#include "sim/flows.hpp"

namespace podsim {

const char* to_string(NetworkBackend b) { return b == NetworkBackend::analytical ? "analytical" : "simgrid"; }

GroupNetwork part_of(const GroupNetwork& net, GroupRef::Part part) {
    if (part == GroupRef::Part::all) return net;
    GroupNetwork out;
    for (const auto& l : net.levels)
        if ((l.name == "DCN") == (part == GroupRef::Part::across_slices)) out.levels.push_back(l);
    return out;
}

CollectiveTimer::CollectiveTimer(const SystemSpec& sys, NetworkBackend backend) : sys_(sys), backend_(backend) {}
CollectiveTimer::~CollectiveTimer() = default;

namespace {

// Splits a group into the sub-groups of one part (inside a slice: the non-DCN dims; across slices: the DCN dim).
void sub_groups(const GroupShape& shape, const std::vector<uint32_t>& members, GroupRef::Part part, GroupShape& sub,
                std::vector<std::vector<uint32_t>>& out) {
    std::vector<bool> keep;
    for (const auto& d : shape.dims) {
        keep.push_back(part == GroupRef::Part::all || (d.dcn == (part == GroupRef::Part::across_slices)));
        if (keep.back()) sub.dims.push_back(d);
    }
    std::map<std::vector<int>, std::vector<uint32_t>> by_fixed;
    for (size_t m = 0; m < members.size(); ++m) {
        std::vector<int> fixed;
        size_t x = m;
        for (size_t k = 0; k < shape.dims.size(); ++k) {
            const int digit = static_cast<int>(x % shape.dims[k].length);
            x /= shape.dims[k].length;
            if (!keep[k]) fixed.push_back(digit);
        }
        by_fixed[fixed].push_back(members[m]);
    }
    for (auto& [_, v] : by_fixed) out.push_back(std::move(v));
}

}  // namespace

double CollectiveTimer::simulate_sharers(std::vector<LoweredCollective> fg,
                                         std::vector<std::vector<LoweredCollective>> background) const {
    // Symmetry: instances of a group are alike, so one of them stands for all. It is simulated together with every
    // instance (of its own group or of the background) that shares a link with it: those are what slow it down;
    // instances elsewhere in the machine do not touch its links and are left out.
    // Ring steps repeat the same sender/receiver pairs, so each distinct pair is routed once.
    auto pairs_of = [](const LoweredCollective& lc) {
        std::set<std::pair<uint32_t, uint32_t>> pairs;
        for (const auto& lane : lc.lanes)
            for (const auto& ph : lane.phases)
                for (const auto& f : ph.flows)
                    if (f.src != f.dst) pairs.emplace(f.src, f.dst);
        return pairs;
    };
    std::set<uint32_t> mine;
    for (const auto& [a, b] : pairs_of(fg.front()))
        for (uint32_t l : graph_->route(a, b)) mine.insert(l);
    auto shares = [&](const LoweredCollective& lc) {
        for (const auto& [a, b] : pairs_of(lc))
            for (uint32_t l : graph_->route(a, b))
                if (mine.count(l)) return true;
        return false;
    };
    std::vector<LoweredCollective> together{fg.front()};
    auto take_sharers = [&](std::vector<LoweredCollective>& v, size_t from) {
        for (size_t i = from; i < v.size(); ++i)
            if (shares(v[i])) together.push_back(std::move(v[i]));
    };
    take_sharers(fg, 1);
    for (auto& v : background) take_sharers(v, 0);
    ++simulations_;
    return simgrid_end_times_s(together, *graph_).front();
}

std::vector<LoweredCollective> CollectiveTimer::lower_all(const Traffic& t) const {
    const GroupNetwork net = part_of(place_group(sys_, t.group.sizes, t.group.which), t.group.part);
    const std::string chosen = collective_cost(t.c, t.bytes, net).algorithm;
    const GroupShape shape = group_shape(sys_, t.group.sizes, t.group.which);
    std::vector<LoweredCollective> instances;
    if (net.size() <= 1 || t.bytes <= 0) return instances;
    for (const auto& members : group_instances(t.group.sizes, t.group.which)) {
        if (t.c == Collective::send_recv) {
            // Pipeline neighbours: stage i sends to stage i + 1 in every pipeline at once.
            LoweredCollective p2p;
            p2p.algorithm = "p2p";
            for (size_t i = 0; i + 1 < members.size(); ++i)
                p2p.lanes.push_back({{FlowPhase{{{members[i], members[i + 1], t.bytes}}}}});
            instances.push_back(std::move(p2p));
            continue;
        }
        GroupShape sub;
        std::vector<std::vector<uint32_t>> parts;
        sub_groups(shape, members, t.group.part, sub, parts);
        for (const auto& pm : parts) instances.push_back(lower_collective(t.c, t.bytes, pm, sub, chosen));
    }
    return instances;
}

CollectiveCost CollectiveTimer::cost_with(const Traffic& fg, const std::vector<Traffic>& background) const {
    const CollectiveCost alone = cost(fg.c, fg.bytes, fg.group);
    if (backend_ == NetworkBackend::analytical || background.empty() || alone.time_s <= 0) return alone;
    std::vector<TrafficKey> key{key_of(fg)};
    for (const auto& b : background) key.push_back(key_of(b));
    if (auto it = shared_cache_.find(key); it != shared_cache_.end()) return it->second;
    if (!graph_) graph_ = std::make_unique<NetworkGraph>(build_network(sys_));
    std::vector<std::vector<LoweredCollective>> bg_all;
    for (const auto& b : background) bg_all.push_back(lower_all(b));
    CollectiveCost out{simulate_sharers(lower_all(fg), std::move(bg_all)), alone.algorithm};
    return shared_cache_[std::move(key)] = out;
}

CollectiveTimer::TrafficKey CollectiveTimer::key_of(const Traffic& t) {
    return {static_cast<int>(t.c), std::llround(t.bytes), t.group.sizes, t.group.which, static_cast<int>(t.group.part)};
}

const GroupNetwork& CollectiveTimer::network(const GroupRef& g) const {
    auto key = std::make_tuple(g.sizes, g.which, static_cast<int>(g.part));
    if (auto it = networks_.find(key); it != networks_.end()) return it->second;
    return networks_[std::move(key)] = part_of(place_group(sys_, g.sizes, g.which), g.part);
}

CollectiveCost CollectiveTimer::cost(Collective c, double bytes, const GroupRef& g) const {
    const GroupNetwork& net = network(g);
    if (backend_ == NetworkBackend::analytical || net.size() <= 1 || bytes <= 0) {
        if (c == Collective::send_recv) {
            auto key = std::make_tuple(g.sizes, g.which);
            auto it = neighbours_.find(key);
            if (it == neighbours_.end()) it = neighbours_.emplace(key, neighbour_link(sys_, g.sizes, g.which)).first;
            const NetLevel& l = it->second;
            if (l.bytes_per_s <= 0) return {0.0, "none"};
            return {bytes / l.bytes_per_s + l.latency_s, "p2p"};
        }
        return collective_cost(c, bytes, net);
    }
    const TrafficKey key = key_of({c, bytes, g});
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    if (!graph_) graph_ = std::make_unique<NetworkGraph>(build_network(sys_));
    // Every instance of the group at once, with the algorithm the closed form picked (ring family or tree).
    std::vector<LoweredCollective> instances = lower_all({c, bytes, g});
    const std::string algorithm = instances.front().algorithm;
    CollectiveCost out{simulate_sharers(std::move(instances), {}), nullptr};
    static std::set<std::string> names;  // node-based: the c_str() handed out stays valid
    out.algorithm = names.insert(algorithm).first->c_str();
    return cache_[key] = out;
}

}  // namespace podsim
