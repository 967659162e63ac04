// Multi-node NVLink domains (GB200/GB300 NVL72) as a topology level, in-network reductions (NVLS, SHARP), and TP
// communication overlap only inside a domain. Systems are built from dgx-h100 with the domain and switch features
// changed, so that the figures below follow from the stated numbers alone.
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "hardware/network_graph.hpp"
#include "models/plan_space.hpp"
#include "models/scenario.hpp"
#include "models/step.hpp"
#include "sim/flows.hpp"
#include "tests/helpers.hpp"

using namespace podsim;
using podsim::test::approx;

namespace {

// 4-GPU trays in NVLink domains of `domain` GPUs (an NVL72 rack when 72), one NIC per GPU.
SystemSpec trays(int nodes, int domain) {
    SystemSpec s = test::catalog().gpu_system("dgx-h100", 1, "t", "$");
    s.node.gpus_per_node = 4;
    s.node.gpu_nics_per_node = 4;
    s.node.nvlink_domain_gpus = domain;
    s.nvlink_domain_gpus = domain;
    s.nodes = nodes;
    s.chips = nodes * 4;
    s.node.provider = "gcp";
    return s;
}

SystemSpec with_nvls(SystemSpec s, double nvls_fraction, double sharp_fraction = 0) {
    s.node.nvlink_sharp = nvls_fraction > 0;
    s.node.nvls_bw_fraction = nvls_fraction;
    s.node.network_sharp = sharp_fraction > 0;
    s.node.sharp_bw_fraction = sharp_fraction;
    return s;
}

}  // namespace

TEST_CASE("an NVLink domain spans VMs: groups inside it use NVLink, beyond it the NICs") {
    const SystemSpec nvl72 = trays(36, 72);  // 144 GPUs: two racks
    SUBCASE("TP 8 over two 4-GPU VMs stays on NVLink, and says it crosses VMs") {
        const GroupNetwork g = place_group(nvl72, {8, 18}, 0);
        REQUIRE(g.levels.size() == 1);
        CHECK(g.levels[0].kind == LevelKind::nvlink);
        CHECK(g.levels[0].size == 8);
        CHECK(g.levels[0].name.find("across VMs") != std::string::npos);
        CHECK(inside_one_nvlink_domain(nvl72, {8, 18}, 0));
    }
    SUBCASE("TP 16 does not tile a 72-GPU domain: the aligned 8 on NVLink, 2 over the NICs") {
        const GroupNetwork g = place_group(nvl72, {16, 9}, 0);
        REQUIRE(g.levels.size() == 2);
        CHECK(g.levels[0].size == 8);
        CHECK(g.levels[1].kind == LevelKind::scale_out);
        CHECK(g.levels[1].size == 2);
        CHECK_FALSE(inside_one_nvlink_domain(nvl72, {16, 9}, 0));
    }
    SUBCASE("TP 8 x DP 9 fills a rack: the DP group of 9 is on NVLink too") {
        const GroupNetwork g = place_group(nvl72, {8, 9, 2}, 1);
        REQUIRE(g.levels.size() == 1);
        CHECK(g.levels[0].size == 9);
    }
    SUBCASE("the same trays without a multi-node domain: TP 8 goes over the NICs between VMs") {
        const SystemSpec plain = trays(36, 4);
        const GroupNetwork g = place_group(plain, {8, 18}, 0);
        REQUIRE(g.levels.size() == 2);
        CHECK(g.levels[0].size == 4);
        CHECK(g.levels[1].size == 2);
        CHECK_FALSE(inside_one_nvlink_domain(plain, {8, 18}, 0));
    }
    SUBCASE("the topology graph has one NVSwitch per domain") {
        const NetworkGraph g = build_network(nvl72);
        int switches = 0;
        for (const auto& n : g.node_names) switches += n.find("nvswitch") != std::string::npos;
        CHECK(switches == 2);
    }
}

TEST_CASE("NVLS: an all-reduce reduced in the switch moves (n+1)/n of the buffer, taken for large buffers") {
    const SystemSpec sys = with_nvls(test::catalog().gpu_system("dgx-h100", 1, "t", "$"), 0.6);
    const GroupNetwork net = place_group(sys, {8}, 0);
    REQUIRE(net.levels.size() == 1);
    const NetLevel& l = net.levels[0];
    CHECK(l.reduce_bytes_per_s == approx(sys.chip.nvlink_bytes_per_s * 0.6));
    const double bytes = 1e9;
    const CollectiveCost c = collective_cost(Collective::all_reduce, bytes, net);
    CHECK(c.kind == Algorithm::nvls);
    CHECK(c.time_s == approx(9.0 / 8 * bytes / l.reduce_bytes_per_s + 2 * l.latency_s));
    // The ring would move 2 x 7/8 of it at the ring's rate: slower here.
    CHECK(c.time_s < 2 * (7.0 / 8 * bytes / l.bytes_per_s));
    // Reduce-scatter and all-gather gain nothing from the switch's reduction: still rings.
    CHECK(collective_cost(Collective::reduce_scatter, bytes, net).kind == Algorithm::ring);
    // Without NVLS the same group all-reduces by ring.
    const GroupNetwork plain = place_group(test::catalog().gpu_system("dgx-a100", 1, "t", "$"), {8}, 0);
    CHECK(collective_cost(Collective::all_reduce, bytes, plain).kind == Algorithm::ring);
}

TEST_CASE("NVLS-tree and CollNet across nodes: the inner level in the switch, the outer by ring or SHARP") {
    const SystemSpec base = test::catalog().gpu_system("dgx-h100", 4, "t", "$");
    const double bytes = 2e9;
    const GroupNetwork nvls = place_group(with_nvls(base, 0.6), {8, 4}, 0);  // one node: NVLS
    CHECK(collective_cost(Collective::all_reduce, bytes, nvls).kind == Algorithm::nvls);
    const GroupNetwork two = place_group(with_nvls(base, 0.6), {32}, 0);    // 8 per node x 4 nodes
    REQUIRE(two.levels.size() == 2);
    const CollectiveCost tree = collective_cost(Collective::all_reduce, bytes, two);
    const auto& in = two.levels[0];
    const auto& out = two.levels[1];
    // Pipelined across the levels: the slower level's bytes set the time; the latencies add.
    const double expect = std::max(9.0 / 8 * bytes / in.reduce_bytes_per_s, 2 * 3.0 / 4 * bytes / 8 / out.bytes_per_s) +
                          2 * in.latency_s + 2 * out.steps * out.latency_s;
    if (tree.kind == Algorithm::nvls_tree) CHECK(tree.time_s == approx(expect));
    else CHECK(tree.time_s <= expect);  // the flat ring can beat it
    const GroupNetwork sharp = place_group(with_nvls(base, 0.6, 0.9), {32}, 0);
    const CollectiveCost cn = collective_cost(Collective::all_reduce, bytes, sharp);
    // SHARP halves what the NICs carry; here the NVLS level is the slower, so CollNet is no faster than NVLS-tree.
    CHECK(cn.time_s <= tree.time_s);
    const GroupNetwork sharp_only = place_group(with_nvls(base, 0, 0.9), {32}, 0);  // A100-like inside, SHARP out
    const CollectiveCost cn2 = collective_cost(Collective::all_reduce, bytes, sharp_only);
    if (cn2.kind == Algorithm::collnet) {
        const auto& o2 = sharp_only.levels[1];
        CHECK(cn2.time_s == approx(std::max(2 * 7.0 / 8 * bytes / sharp_only.levels[0].bytes_per_s,
                                            5.0 / 4 * bytes / 8 / o2.reduce_bytes_per_s) +
                                   2 * sharp_only.levels[0].steps * sharp_only.levels[0].latency_s + 2 * o2.latency_s));
    }
}

TEST_CASE("in-network all-reduces: the closed form matches SimGrid with every group at once") {
    struct K {
        const char* label;
        SystemSpec sys;
        std::vector<int> sizes;
        size_t which;
    };
    const SystemSpec h100x4 = test::catalog().gpu_system("dgx-h100", 4, "t", "$");
    const std::vector<K> cases = {
        {"NVLS in one node", with_nvls(h100x4, 0.6), {8, 4}, 0},
        {"NVLS-tree over 4 nodes", with_nvls(h100x4, 0.6), {32}, 0},
        {"CollNet over 4 nodes", with_nvls(h100x4, 0.6, 0.9), {32}, 0},
        {"NVLS across 4-GPU VMs of a 72-GPU domain", with_nvls(trays(36, 72), 0.6), {8, 18}, 0},
        {"DP 9 in a rack, NVLS", with_nvls(trays(36, 72), 0.6), {8, 9, 2}, 1},
    };
    int checked = 0;
    for (const auto& k : cases) {
        const NetworkGraph g = build_network(k.sys);
        const GroupNetwork net = place_group(k.sys, k.sizes, k.which);
        const double bytes = 512e6;
        const CollectiveCost closed = collective_cost(Collective::all_reduce, bytes, net);
        CAPTURE(k.label);
        CAPTURE(to_string(closed.kind));
        if (closed.kind != Algorithm::nvls && closed.kind != Algorithm::nvls_tree && closed.kind != Algorithm::collnet)
            continue;  // (the flat ring: checked in test_network.cpp)
        LoweredCollective all;
        const auto shape = group_shape(k.sys, k.sizes, k.which);
        for (const auto& members : group_instances(k.sizes, k.which))
            merge_into(all, lower_collective(Collective::all_reduce, bytes, members, shape, closed.kind));
        CHECK(all.algorithm == closed.kind);
        const double sg = simgrid_time_s({all}, g);
        CHECK(sg == approx(closed.time_s).epsilon(0.03));
        ++checked;
    }
    CHECK(checked == static_cast<int>(cases.size()));
}

TEST_CASE("TP communication overlap only inside one NVLink domain") {
    Scenario sc = load_scenario(test::scenario("gpt3-175b-128xa3-mega.json"), test::catalog());
    ParallelPlan p = sc.plan;
    p.tp = 16, p.pp = 8, p.cp = 1, p.dp = sc.system.chips / 128, p.vpp = 1, p.sp = true;
    p.schedule = Schedule::one_f_one_b;
    p.tp_comm_overlap = TpOverlap::full;
    SUBCASE("a stated plan that overlaps TP across VMs is rejected with the reason") {
        const StepResult r = simulate_step(sc.model, sc.system, p);
        REQUIRE_FALSE(r.feasible);
        bool named = false;
        for (const auto& why : r.infeasible) named |= why.find("inside one NVLink domain") != std::string::npos;
        CHECK(named);
        p.tp_comm_overlap = TpOverlap::none;
        CHECK(simulate_step(sc.model, sc.system, p).feasible);
    }
    SUBCASE("the search space gives such TP groups no overlap, and keeps it inside a node") {
        PlanSpace s;
        s.tp = {8, 16};
        s.cp = {1};
        s.vpp = {1};
        s.ep = {1};
        s.pp = {8};
        s.micro_batch = {1};
        s.recompute = {Recompute::selective};
        s.precision = {Precision::bf16};
        s.zero = {1};
        ParallelPlan base = p;
        base.tp_comm_overlap = TpOverlap::full;
        size_t seen = 0;
        for_each_plan(sc.system, base, s, [&](const ParallelPlan& q) {
            ++seen;
            CHECK(q.tp_comm_overlap == (q.tp <= 8 ? TpOverlap::full : TpOverlap::none));
        });
        CHECK(seen > 0);
    }
}

TEST_CASE("search on A4X places TP inside the NVL72 domain and says so; on A3 Mega TP across VMs is priced at NIC") {
    // The shipped A4X scenario (1152 GB200, 16 NVL72 domains of 18 VMs): the best plan's TP group is inside one
    // domain, the text says so, and no ranked plan overlaps TP communication across domains.
    const auto a4x = test::run_podsim("search " + test::scenario("seed-1.2t-a4x-1152xgb200.json") +
                                      " --top 1000 --no-progress --format json");
    REQUIRE(a4x.exit_code == 0);
    const auto j = nlohmann::json::parse(a4x.out);
    REQUIRE(!j.at("ranked").empty());
    auto tp_use = [](const nlohmann::json& plan) -> nlohmann::json {
        for (const auto& n : plan.at("networks"))
            if (n.at("group") == "tp") return n;
        return nullptr;
    };
    const auto best_tp = tp_use(j["ranked"][0]);
    REQUIRE(!best_tp.is_null());
    CHECK(best_tp.at("in_one_nvlink_domain") == true);
    for (const auto& r : j["ranked"]) {
        const auto tp = tp_use(r);
        if (!tp.is_null() && tp.at("in_one_nvlink_domain") == false) CHECK(r["plan"]["tp_comm_overlap"] == "none");
    }
    const auto text = test::run_podsim("search " + test::scenario("seed-1.2t-a4x-1152xgb200.json") + " --top 3 --no-progress");
    CHECK(text.out.find("sits inside one NVLink domain of 72 GPUs (18 VMs of 4)") != std::string::npos);

    // The same model on A3 Mega (8-GPU VMs, no multi-VM NVLink): every TP group wider than a VM has the NIC fabric
    // in its path and no overlap; there must be such plans among those ranked, or the check says nothing.
    const std::string dir = test::temp_dir();
    auto scen = nlohmann::json::parse(std::ifstream(test::scenario("seed-1.2t-a4x-1152xgb200.json")));
    scen["system"] = {{"machine_type", "a3-megagpu-8g"}, {"nodes", 144}};
    test::write_file(dir + "/seed-a3mega.json", scen.dump());
    const auto a3 = test::run_podsim("search " + dir + "/seed-a3mega.json --top 3000 --no-progress --format json");
    REQUIRE(a3.exit_code == 0);
    int wide = 0;
    const auto a3_json = nlohmann::json::parse(a3.out);
    for (const auto& r : a3_json.at("ranked")) {
        const auto tp = tp_use(r);
        if (tp.is_null() || tp.at("size").get<int>() <= 8) continue;
        ++wide;
        CHECK(tp.at("in_one_nvlink_domain") == false);
        CHECK(tp.at("path").get<std::string>().find("GPUDirect-TCPXO") != std::string::npos);
        CHECK(r["plan"]["tp_comm_overlap"] == "none");
    }
    CHECK(wide > 0);
}
