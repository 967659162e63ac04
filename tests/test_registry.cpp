// Enums at the boundary: physics follows a level's kind and an op's pass and role, never their display names; and
// `podsim list` prints the registry of algorithms, level kinds, topologies and schedules.
#include <doctest/doctest.h>

#include <algorithm>

#include "placement/placement.hpp"
#include "models/layer_ops.hpp"
#include "models/op_cost.hpp"
#include "models/plan.hpp"
#include "sim/collectives.hpp"
#include "sim/network_backend.hpp"
#include "tests/helpers.hpp"

using namespace podsim;

namespace {

// Every collective over `net` at a small and a large size, as (time, algorithm) pairs.
std::vector<std::pair<double, Algorithm>> all_costs(const GroupNetwork& net) {
    std::vector<std::pair<double, Algorithm>> out;
    for (Collective c : {Collective::all_reduce, Collective::reduce_scatter, Collective::all_gather,
                         Collective::all_to_all, Collective::send_recv})
        for (double bytes : {4096.0, 1e9}) {
            const CollectiveCost cc = collective_cost(c, bytes, net);
            out.emplace_back(cc.time_s, cc.kind);
            CHECK(std::string(cc.algorithm) == to_string(cc.kind));
        }
    return out;
}

GroupNetwork renamed(GroupNetwork net, const std::string& name) {
    for (auto& l : net.levels) l.name = name;
    return net;
}

ModelSpec small_gpt() {
    ModelSpec m;
    m.name = "gpt";
    m.layers = 4, m.hidden = 4096, m.ffn_hidden = 4 * 4096, m.heads = 32, m.kv_heads = 32, m.head_dim = 128;
    m.vocab = 51200, m.seq_len = 2048;
    return m;
}

}  // namespace

TEST_CASE("renaming a network level does not change any collective's time or algorithm") {
    const auto& cat = test::catalog();
    const SystemSpec dgx = cat.gpu_system("dgx-h100", 4, "t", "$");
    const SystemSpec v5p = cat.tpu_system("v5p-128", 1, "t", "$");
    const SystemSpec v5e4 = cat.tpu_system("v5litepod-16", 4, "t", "$");
    const std::vector<GroupNetwork> nets = {
        place_group(dgx, {4, 8}, 1),   // NVLink x2 + NICs x4: the flat ring competes with the hierarchical one
        place_group(dgx, {8, 4}, 0),   // NVLink x8
        place_group(v5p, {4, 16}, 0),  // one wrapped ICI axis: bidirectional ring
        place_group(v5p, {4, 16}, 1),  // two ICI axes: multi-ring
        place_group(v5e4, {4, 16}, 1),  // ICI axis + DCN slices
    };
    CHECK(nets[0].levels.at(0).kind == LevelKind::nvlink);
    CHECK(nets[0].levels.at(1).kind == LevelKind::scale_out);
    CHECK(nets[3].levels.at(0).kind == LevelKind::ici);
    CHECK(nets[3].levels.at(0).axes == 2);
    CHECK(nets[4].levels.back().kind == LevelKind::dcn);
    for (const auto& net : nets) {
        INFO(net.describe());
        const auto before = all_costs(net);
        for (const char* name : {"", "renamed", "NVLink", "ICI 3 axes torus", "DCN"}) {
            const GroupNetwork r = renamed(net, name);
            CHECK(all_costs(r) == before);
            for (auto part : {GroupRef::Part::inside_slice, GroupRef::Part::across_slices})
                CHECK(all_costs(part_of(r, part)) == all_costs(part_of(net, part)));
        }
    }
    CHECK(collective_cost(Collective::reduce_scatter, 1e9, nets[0]).kind == Algorithm::flat_ring);
    CHECK(collective_cost(Collective::all_gather, 1e9, nets[3]).kind == Algorithm::multi_ring);
    // The other way round: generic levels labelled like NVLink and ICI stay generic (the flat ring, the
    // multi-ring and the torus all-to-all need the kind).
    GroupNetwork plain;
    plain.levels.push_back({8, 200e9, 0, 7, "NVLink"});
    plain.levels.push_back({4, 25e9, 0, 3, "ICI 2 axes torus"});
    const double S = 8e9;
    CHECK(collective_cost(Collective::reduce_scatter, S, plain).kind == Algorithm::hierarchical_ring);
    CHECK(collective_cost(Collective::reduce_scatter, S, plain).time_s ==
          test::approx(7.0 / 8 * S / 200e9 + 3.0 / 4 * (S / 8) / 25e9));
}

TEST_CASE("an op's pass and role, not its name, decide how a profile and the overlap rules time it") {
    const ModelSpec m = small_gpt();
    const SystemSpec sys = test::catalog().gpu_system("dgx-h100", 2, "t", "$");
    const CollectiveTimer timer(sys, NetworkBackend::analytical);
    calib::KernelProfile fitted;  // fitted rates only: no measured kernel keyed by name
    fitted.matmul_rate = 3e14, fitted.matmul_half_dim = 64;
    fitted.attention_rate = 2e14, fitted.elementwise_rate = 2e12;
    for (auto attention : {AttentionKernel::standard, AttentionKernel::flash})
        for (auto rc : {Recompute::none, Recompute::selective, Recompute::minimal}) {
            ParallelPlan p;
            p.tp = 2, p.cp = 2, p.dp = 4, p.sp = true, p.attention = attention, p.recompute = rc;
            p.micro_batch = 1, p.global_batch = 64;
            const std::vector<int> sizes{2, 2, 4, 1};  // tp, cp, dp, pp: innermost first
            CostContext ctx;
            ctx.chip = &sys.chip, ctx.plan = &p, ctx.timer = &timer;
            ctx.tp = {sizes, 0}, ctx.cp = {sizes, 1}, ctx.fsdp = {sizes, 2, GroupRef::Part::inside_slice};
            const LayerOps L = layer_ops(m, p);
            for (const auto* ops : {&L.forward, &L.backward, &L.recompute}) {
                std::vector<Op> anon = *ops;
                for (size_t i = 0; i < anon.size(); ++i) anon[i].name = "op" + std::to_string(i);
                const calib::KernelProfile* profiles[] = {nullptr, &fitted};
                for (const calib::KernelProfile* k : profiles) {
                    ctx.kernels = k;
                    const PassSums a = pass_sums(*ops, ctx), b = pass_sums(anon, ctx);
                    CHECK(a.compute_s == b.compute_s);
                    CHECK(a.attention_s == b.attention_s);
                    CHECK(a.cp_comm_s == b.cp_comm_s);
                    CHECK(a.hideable_comm_s == b.hideable_comm_s);
                    CHECK(a.blocking_comm_s == b.blocking_comm_s);
                    if (std::any_of(ops->begin(), ops->end(), [](const Op& o) { return in_attention_core(o); }))
                        CHECK(a.attention_s > 0);
                }
            }
        }
}

TEST_CASE("ops carry their pass: forward and recomputed ops forward, every backward op backward, wgrad apart") {
    const ModelSpec m = small_gpt();
    ParallelPlan p;
    p.tp = 2, p.cp = 2, p.sp = true, p.attention = AttentionKernel::standard, p.recompute = Recompute::full;
    for (const LayerOps& L : {layer_ops(m, p), embedding_ops(m, p), head_ops(m, p)}) {
        for (const auto& o : L.forward) CHECK_MESSAGE(o.pass == OpPass::forward, o.name);
        for (const auto& o : L.recompute) CHECK_MESSAGE(o.pass == OpPass::forward, o.name);
        for (const auto& o : L.backward) {
            CHECK_MESSAGE(is_backward(o), o.name);
            const bool wgrad = o.name.size() > 6 && o.name.substr(o.name.size() - 6) == ".wgrad";
            CHECK_MESSAGE((o.pass == OpPass::backward_weight) == wgrad, o.name);
        }
    }
    // The attention core is marked where it is made: QK^T and PV (and their backward), the softmax apart.
    int core = 0, softmax = 0;
    for (const auto& o : layer_ops(m, p).forward) {
        core += o.role == OpRole::attention_core;
        softmax += o.role == OpRole::attention_softmax;
    }
    CHECK(core == 2);
    CHECK(softmax == 1);
    // A profile keys a measured kernel by op name and pass: the embedding gradient is found under "backward", as
    // `podsim calibrate` records it (its name has no ".bwd" suffix to say so).
    calib::KernelProfile k;
    k.points.push_back({"embedding.grad", "backward", "elementwise", 0, 1e-3, 1e-3, 1, 0, 1e6});
    const Op grad = embedding_ops(m, p).backward.front();
    REQUIRE(grad.name == "embedding.grad");
    CHECK(profiled_time_s(grad, k, *test::catalog().find_chip("h100-sxm")).value_or(0) ==
          test::approx(1e-3 * grad.bytes / 1e6));
}

TEST_CASE("the registries name every value of their enums, in enum order, with their to_string names") {
    const auto& algos = algorithm_docs();
    for (size_t i = 0; i < algos.size(); ++i) {
        CHECK(algos[i].name == to_string(static_cast<Algorithm>(i)));
        CHECK(algorithm_from_string(algos[i].name) == static_cast<Algorithm>(i));
    }
    CHECK(std::string(to_string(static_cast<Algorithm>(algos.size()))) == "?");  // no value left out
    CHECK_FALSE(algorithm_from_string("Ring").has_value());
    const auto& levels = level_kind_docs();
    for (size_t i = 0; i < levels.size(); ++i) CHECK(levels[i].name == to_string(static_cast<LevelKind>(i)));
    CHECK(std::string(to_string(static_cast<LevelKind>(levels.size()))) == "?");
    const auto& schedules = schedule_docs();
    for (size_t i = 0; i < schedules.size(); ++i) CHECK(schedules[i].name == to_string(static_cast<Schedule>(i)));
    CHECK(std::string(to_string(static_cast<Schedule>(schedules.size()))) == "?");
    const auto& precisions = precision_docs();
    for (size_t i = 0; i < precisions.size(); ++i) CHECK(precisions[i].name == to_string(static_cast<Precision>(i)));
    CHECK(std::string(to_string(static_cast<Precision>(precisions.size()))) == "?");
    const auto& recipes = fp8_recipe_docs();
    for (size_t i = 0; i < recipes.size(); ++i) CHECK(recipes[i].name == to_string(static_cast<Fp8Recipe>(i)));
    CHECK(std::string(to_string(static_cast<Fp8Recipe>(recipes.size()))) == "?");
    for (const auto* docs : {&algos, &levels, &topology_docs(), &schedules, &precisions, &recipes})
        for (const auto& d : *docs) {
            CHECK_FALSE(d.summary.empty());
            for (const auto& p : d.params) CHECK_MESSAGE(!p.doc.empty(), d.name << ": " << p.name);
        }
}

TEST_CASE("podsim list prints every algorithm, level kind, topology, schedule, precision and fp8 recipe, as text and JSON") {
    const auto text = test::run_podsim("list");
    REQUIRE(text.exit_code == 0);
    const std::vector<const std::vector<ChoiceDoc>*> all = {&algorithm_docs(), &level_kind_docs(), &topology_docs(),
                                                            &schedule_docs(),  &precision_docs(),  &fp8_recipe_docs()};
    for (const auto* docs : all)
        for (const auto& d : *docs) CHECK_MESSAGE(text.out.find("  " + d.name + " ") != std::string::npos, d.name);
    for (const char* name : {"ring", "bidirectional ring", "multi-ring", "hierarchical ring", "flat ring", "tree",
                             "all-to-all", "pairwise", "p2p", "nvlink", "scale-out", "ici", "dcn", "tpu-torus",
                             "gpu-rail-fat-tree", "gpipe", "1f1b", "interleaved-1f1b", "fp16", "bf16", "fp8", "int8", "fp4",
                             "delayed", "tensorwise", "blockwise"})
        CHECK_MESSAGE(text.out.find("  " + std::string(name) + " ") != std::string::npos, name);

    const auto json = test::run_podsim("list --format json");
    REQUIRE(json.exit_code == 0);
    const Json j = Json::parse(json.out);
    const char* keys[] = {"algorithms", "levels", "topologies", "schedules", "precisions", "fp8_recipes"};
    for (size_t s = 0; s < 6; ++s) {
        REQUIRE(j.at(keys[s]).size() == all[s]->size());
        for (size_t i = 0; i < all[s]->size(); ++i) CHECK(j[keys[s]][i].at("name") == (*all[s])[i].name);
    }

    const auto one = test::run_podsim("list schedules");
    CHECK(one.exit_code == 0);
    CHECK(one.out.find("interleaved-1f1b") != std::string::npos);
    CHECK(one.out.find("flat ring") == std::string::npos);
    const auto help = test::run_podsim("list --help");
    CHECK(help.exit_code == 0);
    CHECK(help.out.find("usage: podsim list") != std::string::npos);
    const auto bad = test::run_podsim("list bogus");
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("unknown section \"bogus\"") != std::string::npos);
}
