#include "sim/network_backend.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "sim/flows.hpp"

namespace podsim {

const char* to_string(NetworkBackend b) { return b == NetworkBackend::analytical ? "analytical" : "simgrid"; }

GroupNetwork part_of(const GroupNetwork& net, GroupRef::Part part) {
    if (part == GroupRef::Part::all) return net;
    GroupNetwork out;
    for (const auto& l : net.levels)
        if ((l.kind == LevelKind::dcn) == (part == GroupRef::Part::across_slices)) out.levels.push_back(l);
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

template <class Map, class Key, class Make>
const typename Map::mapped_type& CollectiveTimer::cached(Map& map, const Key& key, Make&& make) const {
    {
        std::shared_lock lock(mutex_);
        if (auto it = map.find(key); it != map.end()) return it->second;
    }
    typename Map::mapped_type value = make();  // unlocked: other threads look up (or compute) meanwhile
    std::unique_lock lock(mutex_);
    return map.try_emplace(typename Map::key_type(key), std::move(value)).first->second;
}

const NetworkGraph& CollectiveTimer::graph() const {
    std::call_once(graph_once_, [this] { graph_ = std::make_unique<NetworkGraph>(build_network(sys_)); });
    return *graph_;
}

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
    const NetworkGraph& g = graph();
    std::set<uint32_t> mine;
    for (const auto& [a, b] : pairs_of(fg.front()))
        for (uint32_t l : g.route(a, b)) mine.insert(l);
    auto shares = [&](const LoweredCollective& lc) {
        for (const auto& [a, b] : pairs_of(lc))
            for (uint32_t l : g.route(a, b))
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
    simulations_.fetch_add(1, std::memory_order_relaxed);
    return simgrid_end_times_s(together, g).front();
}

std::vector<LoweredCollective> CollectiveTimer::lower_all(const Traffic& t) const {
    const GroupNetwork& net = network(t.group);
    const Algorithm chosen = collective_cost(t.c, t.bytes, net).kind;
    const GroupShape shape = group_shape(sys_, t.group.sizes, t.group.which);
    std::vector<LoweredCollective> instances;
    if (net.size() <= 1 || t.bytes <= 0) return instances;
    for (const auto& members : group_instances(t.group.sizes, t.group.which)) {
        if (t.c == Collective::send_recv) {
            // Pipeline neighbours: stage i sends to stage i + 1 in every pipeline at once.
            LoweredCollective p2p;
            p2p.algorithm = Algorithm::p2p;
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
    return cached(shared_cache_, key, [&] {
        std::vector<std::vector<LoweredCollective>> bg_all;
        for (const auto& b : background) bg_all.push_back(lower_all(b));
        return priced(simulate_sharers(lower_all(fg), std::move(bg_all)), alone.kind);
    });
}

CollectiveTimer::TrafficKey CollectiveTimer::key_of(const Traffic& t) {
    return {static_cast<int>(t.c), std::llround(t.bytes), t.group.sizes, t.group.which, static_cast<int>(t.group.part)};
}

const GroupNetwork& CollectiveTimer::network(const GroupRef& g) const {
    const int part = static_cast<int>(g.part);
    return cached(networks_, std::tie(g.sizes, g.which, part),
                  [&] { return part_of(place_group(sys_, g.sizes, g.which), g.part); });
}

const NetLevel& CollectiveTimer::neighbour(const GroupRef& g) const {
    return cached(neighbours_, std::tie(g.sizes, g.which), [&] { return neighbour_link(sys_, g.sizes, g.which); });
}

CollectiveCost CollectiveTimer::cost(Collective c, double bytes, const GroupRef& g) const {
    const GroupNetwork& net = network(g);
    if (backend_ == NetworkBackend::analytical || net.size() <= 1 || bytes <= 0) {
        if (c == Collective::send_recv) return p2p_cost(bytes, neighbour(g));
        return collective_cost(c, bytes, net);
    }
    // Every instance of the group at once, with the algorithm the closed form picked (ring family or tree), named
    // as lowered.
    return cached(cache_, key_of({c, bytes, g}), [&] {
        std::vector<LoweredCollective> instances = lower_all({c, bytes, g});
        const Algorithm algorithm = instances.front().algorithm;
        return priced(simulate_sharers(std::move(instances), {}), algorithm);
    });
}

}  // namespace podsim
