// Network fidelity: collectives lowered to flows on the topology graph; the analytical backends against SimGrid.
#include <doctest/doctest.h>

#include "hardware/network_graph.hpp"
#include "sim/flows.hpp"
#include "sim/network_backend.hpp"
#include "tests/helpers.hpp"

using namespace podsim;
using podsim::test::approx;

namespace {

struct Case {
    const char* label;
    SystemSpec sys;
    std::vector<int> sizes;
    size_t which;
};

std::vector<Case> topology_cases() {
    const auto& cat = test::catalog();
    return {
        {"TPU v5p 4x4x4 torus, one wrapped axis", cat.tpu_system("v5p-128", 1, "t", "$"), {4, 16}, 0},
        {"TPU v5p 4x4x4 torus, two axes (multi-ring)", cat.tpu_system("v5p-128", 1, "t", "$"), {4, 16}, 1},
        {"TPU v5e 4x4 mesh (no wraparound)", cat.tpu_system("v5litepod-16", 1, "t", "$"), {4, 4}, 0},
        {"TPU v5e multislice over DCN", cat.tpu_system("v5litepod-16", 4, "t", "$"), {16, 4}, 1},
        {"DGX H100 NVSwitch node", cat.gpu_system("dgx-h100", 1, "t", "$"), {8}, 0},
        {"DGX H100 rails across 4 nodes", cat.gpu_system("dgx-h100", 4, "t", "$"), {8, 4}, 1},
        {"DGX H100 hierarchical 2 per node x 4 nodes", cat.gpu_system("dgx-h100", 4, "t", "$"), {4, 8}, 1},
        {"DGX H100 16 GPUs over 2 nodes", cat.gpu_system("dgx-h100", 2, "t", "$"), {16}, 0},
    };
}

// Group `which` of `sizes` on the v5p 4x4x4 torus (v5p-128): its network graph, shape and first instance.
struct V5pGroup {
    SystemSpec sys = test::catalog().tpu_system("v5p-128", 1, "t", "$");
    NetworkGraph g = build_network(sys);
    GroupShape shape;
    std::vector<uint32_t> members;
    V5pGroup(const std::vector<int>& sizes, size_t which)
        : shape(group_shape(sys, sizes, which)), members(group_instances(sizes, which).front()) {}
};

LoweredCollective all_instances(Collective c, double bytes, const Case& k, Algorithm algorithm) {
    LoweredCollective all;
    const auto shape = group_shape(k.sys, k.sizes, k.which);
    for (const auto& members : group_instances(k.sizes, k.which))
        merge_into(all, lower_collective(c, bytes, members, shape, algorithm));
    return all;
}

}  // namespace

TEST_CASE("uncontended: the flow-level analytical backend and SimGrid agree within 2% for every collective") {
    for (const auto& k : topology_cases()) {
        NetworkGraph g = build_network(k.sys);
        const auto shape = group_shape(k.sys, k.sizes, k.which);
        const auto members = group_instances(k.sizes, k.which).front();
        for (Collective c : {Collective::all_reduce, Collective::reduce_scatter, Collective::all_gather,
                             Collective::all_to_all, Collective::send_recv}) {
            for (double bytes : {256e6, 64e3}) {
                auto lc = lower_collective(c, bytes, members, shape);
                const double a = analytical_time_s(lc, g);
                const double s = simgrid_time_s({lc}, g);
                if (c == Collective::all_to_all) {
                    // One phase of all pairs: flows on short routes finish early, so the busiest link's bytes plus
                    // the longest route's latency (the analytical sum) bounds SimGrid from above; small messages,
                    // latency-bound, come in up to a quarter under it.
                    CHECK_MESSAGE(s <= a * 1.02, k.label << ": all-to-all SimGrid " << s << " s over " << a);
                    CHECK_MESSAGE(s >= a * (bytes > 1e6 ? 0.98 : 0.7), k.label << ": all-to-all SimGrid " << s << " s under " << a);
                    continue;
                }
                CHECK_MESSAGE(s == approx(a).epsilon(0.02),
                              std::string(k.label) << ", " << std::string(to_string(c)) << " of " << bytes << " B ("
                                                   << to_string(lc.algorithm) << "): analytical " << a << " s, SimGrid "
                                                   << s << " s");
            }
        }
        auto tree = lower_collective(Collective::all_reduce, 4096, members, shape, Algorithm::tree);
        CHECK(simgrid_time_s({tree}, g) == approx(analytical_time_s(tree, g)).epsilon(0.02));
    }
}

TEST_CASE("the closed-form model matches SimGrid when every group of the kind communicates at once") {
    // The closed form (used by the planner) assumes all instances of a group run together: it gives each member
    // its share of shared NICs and DCN hosts. SimGrid, given all instances, must land on the same time.
    for (const auto& k : topology_cases()) {
        NetworkGraph g = build_network(k.sys);
        const GroupNetwork net = place_group(k.sys, k.sizes, k.which);
        for (Collective c : {Collective::all_reduce, Collective::reduce_scatter, Collective::all_gather}) {
            const double bytes = 512e6;
            const auto closed_cost = collective_cost(c, bytes, net);
            const double closed = closed_cost.time_s;
            const double sg = simgrid_time_s({all_instances(c, bytes, k, closed_cost.kind)}, g);
            if (closed_cost.kind == Algorithm::flat_ring) {
                // The channels of a flat ring load every NVLink about as much as the NICs; max-min sharing does
                // not keep both saturated, so SimGrid is slower than the closed form, which is a lower bound here.
                CHECK_MESSAGE(sg >= closed * 0.98, k.label << ": flat ring SimGrid " << sg << " s below closed " << closed);
                continue;
            }
            CHECK_MESSAGE(sg == approx(closed).epsilon(0.02),
                          std::string(k.label) << ", " << std::string(to_string(c)) << ": closed form " << closed << " s, SimGrid " << sg << " s");
        }
    }
}

TEST_CASE("multi-ring over uneven torus axes: the closed form follows the lanes and matches all-instance SimGrid") {
    // A multi-ring's lanes carry 1/D of the data each through the axes in rotated order; when the axes differ (a
    // strided pair, axes of 4 and 8) the lane that meets the slow axis with the most data sets the time, which the
    // summed axis rates would put 1.4x to 3x too fast (the 1T bench scenario's FSDP all-gather on v5p-12288).
    const auto& cat = test::catalog();
    const std::vector<Case> cases{
        // Group 1 of {2, 32} on 4x4x4: a pair 2 apart round the wrapped axis 0 (interleaved with group 0's other
        // position, the half-way routes split both ways), then axes 1 and 2.
        {"TPU v5p 4x4x4, a strided pair then two axes", cat.tpu_system("v5p-128", 1, "t", "$"), {2, 32}, 1},
        {"TPU v4 4x4x8, three axes of 4, 4 and 8", cat.tpu_system("v4-256", 1, "t", "$"), {128}, 0},
    };
    for (const auto& k : cases) {
        NetworkGraph g = build_network(k.sys);
        const GroupNetwork net = place_group(k.sys, k.sizes, k.which);
        REQUIRE(net.levels.size() == 1);
        REQUIRE(net.levels[0].ici_axes.size() == 3);
        for (Collective c : {Collective::reduce_scatter, Collective::all_gather, Collective::all_reduce}) {
            const auto closed = collective_cost(c, 512e6, net);
            CHECK(closed.kind == Algorithm::multi_ring);
            const double sg = simgrid_time_s({all_instances(c, 512e6, k, closed.kind)}, g);
            CHECK_MESSAGE(sg == approx(closed.time_s).epsilon(0.02), std::string(k.label) << ", " << std::string(to_string(c))
                                                                      << ": closed form " << closed.time_s << " s, SimGrid "
                                                                      << sg << " s");
            // The summed-rate estimate the closed form used to give: (n-1)/n x bytes over the level's rate.
            const double summed = (net.size() - 1.0) / net.size() * 512e6 / net.levels[0].bytes_per_s *
                                  (c == Collective::all_reduce ? 2 : 1);
            if (k.sizes.size() == 2) CHECK_MESSAGE(sg > 1.4 * summed, std::string(to_string(c)) << ": " << sg / summed);
        }
    }
}

TEST_CASE("contention: two data-parallel rings sharing a NIC take twice as long as one alone") {
    // a3-highgpu-8g has 4 GPU NICs for 8 GPUs: GPUs 0 and 1 share NIC 0. The DP ring of the GPU-0s and that of the
    // GPU-1s both cross nodes on that NIC, so max-min sharing gives each half of it.
    const SystemSpec sys = test::catalog().gpu_system("a3-highgpu-8g", 4, "t", "$");
    NetworkGraph g = build_network(sys);
    const std::vector<int> sizes{8, 4};
    const auto shape = group_shape(sys, sizes, 1);
    const auto groups = group_instances(sizes, 1);
    const double bytes = 1e9;
    auto ring0 = lower_collective(Collective::all_reduce, bytes, groups[0], shape);
    auto ring1 = lower_collective(Collective::all_reduce, bytes, groups[1], shape);
    const double alone = simgrid_time_s({ring0}, g);
    const double together = simgrid_time_s({ring0, ring1}, g);
    CHECK(alone == approx(analytical_time_s(ring0, g)).epsilon(0.02));
    CHECK(together == approx(2 * alone).epsilon(0.02));
    // GPUs 0 and 2 use different NICs: no sharing, no slowdown.
    auto ring2 = lower_collective(Collective::all_reduce, bytes, groups[2], shape);
    CHECK(simgrid_time_s({ring0, ring2}, g) == approx(alone).epsilon(0.02));
}

TEST_CASE("a ring's steps are one phase with a count, timed as that many barrier-separated steps") {
    // A 16-chip multi-ring on the v5p 4x4x4 torus (two axes of 4): each ring pass is one phase repeated 3 times.
    const V5pGroup v({4, 16}, 1);
    const NetworkGraph& g = v.g;
    for (double bytes : {1e9, 4e3}) {  // bandwidth-bound, then latency-bound
        const LoweredCollective folded = lower_collective(Collective::all_reduce, bytes, v.members, v.shape);
        LoweredCollective unfolded = folded;
        size_t steps = 0;
        for (auto& lane : unfolded.lanes) {
            std::vector<FlowPhase> phases;
            for (const auto& ph : lane.phases)
                for (uint32_t r = 0; r < ph.repeat; ++r) phases.push_back({ph.flows, 1});
            steps += phases.size();
            lane.phases = std::move(phases);
        }
        // 2 lanes x (reduce-scatter and all-gather) x 2 axes of 4 = 24 steps, in 8 phases.
        CHECK(steps == 24);
        CHECK(folded.lanes.size() * folded.lanes.front().phases.size() == 8);
        CHECK(analytical_time_s(folded, g) == approx(analytical_time_s(unfolded, g)).epsilon(1e-12));
        CHECK(simgrid_time_s({folded}, g) == approx(simgrid_time_s({unfolded}, g)).epsilon(1e-6));
        // With another collective on the same links: the same, as every flow of a step moves at one rate.
        CHECK(simgrid_time_s({folded, folded}, g) == approx(simgrid_time_s({unfolded, unfolded}, g)).epsilon(1e-6));
    }
}

TEST_CASE("contention: two groups sharing a torus axis split its links") {
    // On a 4x4 v5e mesh... use the 16-chip v5e torus-free slice: groups {0,1,2,3} along axis 0 in rows 0 and the
    // strided group of column 0 cross the same links only if they overlap; two identical rings on the same row do.
    const V5pGroup row({4, 16}, 0);
    auto a = lower_collective(Collective::all_gather, 1e9, row.members, row.shape);
    auto b = lower_collective(Collective::all_gather, 1e9, row.members, row.shape);  // a second one on the same ring
    const double alone = simgrid_time_s({a}, row.g);
    CHECK(simgrid_time_s({a, b}, row.g) == approx(2 * alone).epsilon(0.02));
}

TEST_CASE("the algorithm is named: ring, bidirectional ring, multi-ring, hierarchical, tree, pairwise, p2p") {
    const auto cases = topology_cases();
    auto algo = [&](size_t i, Collective c, Algorithm chosen = Algorithm::ring) {
        const auto& k = cases[i];
        return std::string(to_string(lower_collective(c, 1e6, group_instances(k.sizes, k.which).front(),
                                                      group_shape(k.sys, k.sizes, k.which), chosen)
                                         .algorithm));
    };
    CHECK(algo(0, Collective::all_reduce) == "bidirectional ring");
    CHECK(algo(1, Collective::all_reduce) == "multi-ring");
    CHECK(algo(2, Collective::all_gather) == "ring");
    CHECK(algo(6, Collective::reduce_scatter) == "hierarchical ring");
    CHECK(algo(4, Collective::all_reduce, Algorithm::tree) == "tree");
    CHECK(algo(6, Collective::all_reduce, Algorithm::flat_ring) == "flat ring");
    CHECK(algo(4, Collective::all_to_all) == "pairwise");
    CHECK(algo(4, Collective::send_recv) == "p2p");
}

TEST_CASE("topology graphs: torus wraparound only where the slice has it; rails and spines on GPU clusters") {
    auto count = [](const NetworkGraph& g, const char* prefix) {
        size_t n = 0;
        for (const auto& l : g.links) n += l.name.rfind(prefix, 0) == 0;
        return n;
    };
    // 4x4x4 torus: 64 chips x 3 axes x 2 directions.
    CHECK(count(build_network(test::catalog().tpu_system("v5p-128", 1, "t", "$")), "ici.") == 64 * 3 * 2);
    // 4x4 mesh: 2 x 4 rows x 3 links x 2 directions.
    CHECK(count(build_network(test::catalog().tpu_system("v5litepod-16", 1, "t", "$")), "ici.") == 2 * 4 * 3 * 2);
    auto twisted = test::catalog().tpu_system("v4-256", 1, "t", "$");  // 4x4x8
    twisted.twisted = true;
    CHECK(count(build_network(twisted), "ici.") == 128 * 3 * 2);
    auto dgx = test::catalog().gpu_system("dgx-h100", 64, "t", "$");  // 2 pods of 32 nodes
    auto g = build_network(dgx);
    CHECK(count(g, "uplink.") == 8 * 2 * 2);  // 8 rails x 2 pods, both directions
    // Two GPUs on the same rail in different pods route through that rail's spine.
    const auto& r = g.route(0, 8 * 40);
    bool via_spine = false;
    for (uint32_t l : r) via_spine |= g.links[l].name.rfind("uplink.r0", 0) == 0;
    CHECK(via_spine);
}

TEST_CASE("contention across groups: a pipeline send on the same rail delays a data-parallel ring by its bytes") {
    // 4 DGX H100 nodes, layout tp 8 x dp 2 x pp 2: the DP pair (nodes 0, 1) and the PP pair (nodes 0, 2) of GPU 0
    // both leave node 0 on rail 0. Started together on that link, the send (B bytes) and the ring's first step
    // (S/2 bytes, S/2 > B) share it until the send is done: the ring ends B / bandwidth later.
    const SystemSpec sys = test::catalog().gpu_system("dgx-h100", 4, "t", "$");
    const std::vector<int> sizes{8, 1, 2, 2};
    const CollectiveTimer sg(sys, NetworkBackend::simgrid), an(sys, NetworkBackend::analytical);
    const CollectiveTimer::Traffic ring{Collective::all_reduce, 2e9, {sizes, 2, GroupRef::Part::all}};
    const CollectiveTimer::Traffic send{Collective::send_recv, 200e6, {sizes, 3, GroupRef::Part::all}};
    const double alone = sg.cost(ring.c, ring.bytes, ring.group).time_s;
    const double with = sg.cost_with(ring, {send}).time_s;
    const double rail_bytes_per_s = 50e9 * 0.92;
    CHECK(with == approx(alone + send.bytes / rail_bytes_per_s).epsilon(0.02));
    // The analytical backend is congestion-free by definition.
    CHECK(an.cost_with(ring, {send}).time_s == approx(an.cost(ring.c, ring.bytes, ring.group).time_s));
}

TEST_CASE("direct routes: GPU rails as BFS finds them, TPU tori dimension-ordered and as short, ties split") {
    const auto& cat = test::catalog();
    std::vector<SystemSpec> gpus{cat.gpu_system("dgx-h100", 6, "t", "$"), cat.gpu_system("a3-highgpu-8g", 4, "t", "$"),
                                 cat.gpu_system("a3-megagpu-8g", 3, "t", "$")};
    gpus[0].nodes_per_leaf = 2, gpus[1].nodes_per_leaf = 2;  // several pods: routes over the spines too
    for (const auto& sys : gpus) {
        NetworkGraph g = build_network(sys);
        REQUIRE(g.direct_route);
        for (uint32_t a = 0; a < uint32_t(sys.chips); ++a)
            for (uint32_t b = 0; b < uint32_t(sys.chips); ++b)
                if (a != b) CHECK_MESSAGE(g.route(a, b) == g.bfs_route(a, b), sys.label << ": " << a << " -> " << b);
    }
    // NVL72 (a4x, 18 VMs of 4 GPUs per NVLink domain, several pods): to a GPU of another domain on the sender's
    // rail the sender's own NIC, even where a relay over NVLink to a GPU in the receiver's pod ties with it on
    // links (NCCL relays, PXN, only to reach another rail); every route as short as BFS's.
    {
        SystemSpec sys = cat.gpu_system("a4x-highgpu-4g", 36, "t", "$");  // two domains
        sys.nodes_per_leaf = 9;
        NetworkGraph g = build_network(sys);
        REQUIRE(g.direct_route);
        int same_rail = 0;
        for (uint32_t a = 0; a < 144; a += 5)
            for (uint32_t b = 72; b < 144; b += 3) {
                if (a / 72 == b / 72) continue;
                const auto& r = g.route(a, b);
                CHECK_MESSAGE(r.size() == g.bfs_route(a, b).size(), a << " -> " << b);
                if (a % 4 == b % 4) {
                    ++same_rail;
                    CHECK_MESSAGE(g.links[r.front()].name.find(".pcie") != std::string::npos, a << " -> " << b << " leaves by "
                                                                                            << g.links[r.front()].name);
                    CHECK(g.links[r.front()].src == g.chip_node[a]);
                }
            }
        CHECK(same_rail > 20);
    }
    // One slice: every route as short as BFS's, chained from a to b; half-way ties go both ways.
    const SystemSpec tpu = cat.tpu_system("v5p-128", 1, "t", "$");  // 4x4x4, wrapped
    NetworkGraph g = build_network(tpu);
    REQUIRE(g.direct_route);
    int plus_ties = 0, minus_ties = 0;
    for (uint32_t a = 0; a < 64; ++a)
        for (uint32_t b = 0; b < 64; ++b) {
            if (a == b) continue;
            const auto& r = g.route(a, b);
            CHECK(r.size() == g.bfs_route(a, b).size());
            CHECK(g.links[r.front()].src == g.chip_node[a]);
            CHECK(g.links[r.back()].dst == g.chip_node[b]);
            for (size_t i = 1; i < r.size(); ++i) CHECK(g.links[r[i]].src == g.links[r[i - 1]].dst);
            if (b == (a / 4) * 4 + (a % 4 + 2) % 4)  // half-way round axis 0
                (g.links[r.front()].dst == g.chip_node[(a / 4) * 4 + (a % 4 + 1) % 4] ? plus_ties : minus_ties)++;
        }
    CHECK(plus_ties == 32);
    CHECK(minus_ties == 32);
    // Multislice: traffic inside a slice stays on ICI (BFS would cut through the DCN when that is fewer hops).
    const SystemSpec multi = cat.tpu_system("v4-128", 2, "t", "$");
    NetworkGraph gm = build_network(multi);
    for (uint32_t l : gm.route(0, 63)) CHECK(gm.links[l].name.rfind("ici.", 0) == 0);
    CHECK(gm.route(0, 64).size() == 4);  // chip -> host -> DCN -> host -> chip
}

TEST_CASE("all-to-all on a torus: the closed form's busiest link matches all-instance SimGrid") {
    // Every expert group sends at once; the closed form prices the busiest link of the dimension-ordered routes
    // (torus_all_to_all). Groups on whole wrapped axes, on a line, and strided ones that share links.
    const auto& cat = test::catalog();
    struct A2a {
        const char* label;
        SystemSpec sys;
        std::vector<int> sizes;
        size_t which;
    };
    const std::vector<A2a> cases{
        {"v5p 4x4x4: 16 on two whole axes", cat.tpu_system("v5p-128", 1, "t", "$"), {16, 4}, 0},
        {"v5p 4x4x4: 64 on all three", cat.tpu_system("v5p-128", 1, "t", "$"), {64}, 0},
        {"v5e 4x4 mesh: 16 on lines", cat.tpu_system("v5litepod-16", 1, "t", "$"), {16}, 0},
    };
    for (const auto& k : cases) {
        NetworkGraph g = build_network(k.sys);
        const GroupNetwork net = place_group(k.sys, k.sizes, k.which);
        const auto shape = group_shape(k.sys, k.sizes, k.which);
        const double bytes = 256e6;
        std::vector<LoweredCollective> all;
        for (const auto& m : group_instances(k.sizes, k.which))
            all.push_back(lower_collective(Collective::all_to_all, bytes, m, shape));
        const double closed = collective_cost(Collective::all_to_all, bytes, net).time_s;
        const double sg = simgrid_time_s(all, g);
        CHECK_MESSAGE(sg == approx(closed).epsilon(0.05), std::string(k.label) << ": closed form " << closed << " s, SimGrid " << sg << " s");
    }
    // On one 4-member ring, each link carries bytes x 4/8 each way: 256 MB x 0.5 / link rate.
    const GroupNetwork ring_net = place_group(cat.tpu_system("v5p-128", 1, "t", "$"), {4, 16}, 0);
    const NetLevel& ring = ring_net.levels.front();
    CHECK(torus_all_to_all(256e6, ring).busiest_link_s == approx(256e6 * 0.5 / ring.link_bytes_per_s));
}
