// Collective timing for the step model, by either network backend, for a group named by its place in the rank
// layout. The analytical backend is the closed form over the group's network levels (the planner's fast path);
// the SimGrid backend lowers every instance of the group to flows on the topology graph and runs them together,
// so groups of one kind that share links (NICs, DCN hosts, torus axes, spine uplinks) slow each other down.
//
// One timer may be shared by threads (the planner's workers): its caches are behind a reader-writer lock, and
// SimGrid runs happen in forked children outside it.
#pragma once
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <tuple>
#include <vector>

#include "hardware/network_graph.hpp"
#include "hardware/system.hpp"
#include "placement/placement.hpp"
#include "sim/collectives.hpp"
#include "sim/flows.hpp"

namespace podsim {

enum class NetworkBackend { analytical, simgrid };
const char* to_string(NetworkBackend b);

struct GroupRef {
    std::vector<int> sizes;  // rank layout, innermost first
    size_t which = 0;        // the group's dimension in the layout
    enum class Part { all, inside_slice, across_slices } part = Part::all;
};

class CollectiveTimer {
public:
    CollectiveTimer(const SystemSpec& sys, NetworkBackend backend);
    ~CollectiveTimer();
    CollectiveTimer(const CollectiveTimer&) = delete;
    CollectiveTimer& operator=(const CollectiveTimer&) = delete;
    // Every const member may be called from several threads at once.
    CollectiveCost cost(Collective c, double bytes, const GroupRef& g) const;

    struct Traffic {
        Collective c;
        double bytes;
        GroupRef group;
    };
    // The time of `fg` while `background` collectives of other groups run at the same moment (started together,
    // each once). The analytical backend ignores the background (congestion-free); SimGrid shares the links.
    CollectiveCost cost_with(const Traffic& fg, const std::vector<Traffic>& background) const;
    // The closed-form network of a group (its part), placed once per layout and remembered: the step model asks
    // for the same few groups many times per plan. The reference stays valid as long as the timer.
    const GroupNetwork& network(const GroupRef& g) const;
    NetworkBackend backend() const { return backend_; }
    // SimGrid runs so far (the rest came from the cache). Threads that ask for one new query at the same moment
    // may each run it (the first result is kept; they are equal), so under threads this can exceed the distinct
    // queries.
    size_t simulations() const { return simulations_.load(std::memory_order_relaxed); }

private:
    std::vector<LoweredCollective> lower_all(const Traffic& t) const;
    double simulate_sharers(std::vector<LoweredCollective> fg, std::vector<std::vector<LoweredCollective>> bg) const;
    const NetLevel& neighbour(const GroupRef& g) const;
    const NetworkGraph& graph() const;  // built on first use, once
    // The value cached under `key` in `map`, computed by `make` (outside the lock) when absent.
    template <class Map, class Key, class Make>
    const typename Map::mapped_type& cached(Map& map, const Key& key, Make&& make) const;

    const SystemSpec& sys_;
    NetworkBackend backend_;
    mutable std::once_flag graph_once_;
    mutable std::unique_ptr<NetworkGraph> graph_;
    // Guards the maps below: lookups share it, inserts hold it alone. Entries are never erased, and std::map
    // nodes do not move, so a reference handed out stays valid after the lock is released.
    mutable std::shared_mutex mutex_;
    // One query exactly: collective, bytes (rounded to the byte), group layout, group index, part.
    using TrafficKey = std::tuple<int, long long, std::vector<int>, size_t, int>;
    static TrafficKey key_of(const Traffic& t);
    mutable std::map<TrafficKey, CollectiveCost> cache_;
    // A query with background traffic: the foreground's key, then each background's (no hash folding, so two
    // different mixes can never share an entry).
    mutable std::map<std::vector<TrafficKey>, CollectiveCost> shared_cache_;
    mutable std::atomic<size_t> simulations_{0};
    // Keyed (layout, group index, part) and (layout, group index); std::less<> finds by a tuple of references, so
    // a lookup copies no layout.
    mutable std::map<std::tuple<std::vector<int>, size_t, int>, GroupNetwork, std::less<>> networks_;
    mutable std::map<std::tuple<std::vector<int>, size_t>, NetLevel, std::less<>> neighbours_;
};

// The levels of a group's closed-form network that a part covers.
GroupNetwork part_of(const GroupNetwork& net, GroupRef::Part part);

}  // namespace podsim
