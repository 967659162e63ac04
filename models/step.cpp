#include "models/step.hpp"

#include <algorithm>
#include <cmath>

#include "hardware/topology.hpp"
#include "models/layer_ops.hpp"
#include "models/op_cost.hpp"
#include "models/result_checks.hpp"
#include "models/step_parts.hpp"
#include "sim/collectives.hpp"

namespace podsim {

namespace {

enum Category { kCompute = 0, kExposedComm = 1, kOptimizer = 2, kSideComm = 3 };

struct VOp {
    bool fwd;
    int chunk;
    int mb;
};

std::vector<VOp> stage_order(const ParallelPlan& p, int s, int m) {
    std::vector<VOp> out;
    const int P = p.pp, v = p.vpp;
    if (p.schedule == Schedule::gpipe) {
        for (int c = 0; c < v; ++c)
            for (int i = 0; i < m; ++i) out.push_back({true, c, i});
        for (int c = v - 1; c >= 0; --c)
            for (int i = 0; i < m; ++i) out.push_back({false, c, i});
        return out;
    }
    if (p.schedule == Schedule::one_f_one_b) {
        const int warm = std::min(P - s - 1, m);
        for (int i = 0; i < warm; ++i) out.push_back({true, 0, i});
        for (int i = 0; i < m - warm; ++i) {
            out.push_back({true, 0, warm + i});
            out.push_back({false, 0, i});
        }
        for (int i = m - warm; i < m; ++i) out.push_back({false, 0, i});
        return out;
    }
    // Interleaved 1F1B (Narayanan et al. 2021, sec. 2.2; Megatron-LM schedules.py): virtual micro-batch k maps to
    // chunk (k / P) % v and micro-batch (k / (P v)) P + k % P; backward visits chunks in reverse.
    const int M = m * v;
    const int warm = std::min((P - s - 1) * 2 + (v - 1) * P, M);
    auto f_at = [&](int k) { return VOp{true, (k / P) % v, (k / (P * v)) * P + k % P}; };
    auto b_at = [&](int k) { return VOp{false, v - 1 - (k / P) % v, (k / (P * v)) * P + k % P}; };
    for (int k = 0; k < warm; ++k) out.push_back(f_at(k));
    for (int k = 0; k < M - warm; ++k) {
        out.push_back(f_at(warm + k));
        out.push_back(b_at(k));
    }
    for (int k = M - warm; k < M; ++k) out.push_back(b_at(k));
    return out;
}

CostClass make_class(std::string label, double total_s, double exposed_comm_s, Category main = kCompute) {
    CostClass c;
    c.label = std::move(label);
    c.duration_s = total_s;
    if (main == kCompute) {
        c.parts_s[kCompute] = total_s - exposed_comm_s;
        c.parts_s[kExposedComm] = exposed_comm_s;
    } else {
        c.parts_s[main] = total_s;
    }
    return c;
}

}  // namespace

StepResult simulate_step(const ModelSpec& m, const SystemSpec& sys, const ParallelPlan& p, const StepOptions& opt) {
    StepResult r;
    // The GEMM efficiency: an override (fitting), else a profile for this chip and precision class, else the
    // catalog's stated default. Every plan reports which one it used.
    ChipSpec chip = resolve_efficiency(sys, p, opt.use_profiles, opt.matmul_fraction_override, r.efficiency_source);
    auto fail = [&](std::string why, const char* path) {
        r.feasible = false;
        r.infeasible.push_back(std::move(why));
        r.infeasible_paths.push_back(path);
    };
    check_split(m, sys, p, chip, fail, opt.budget);
    const long long mbs = p.global_batch / std::max<long long>(1, p.micro_batch * p.dp);

    const Layout lay = layout_for(sys, p);
    const CollectiveTimer local_timer(sys, NetworkBackend::analytical);
    const CollectiveTimer& timer = opt.timer ? *opt.timer : local_timer;
    CostContext ctx;
    ctx.chip = &chip;
    ctx.plan = &p;
    ctx.timer = &timer;
    if (opt.kernels) {
        if (opt.kernels->chip != chip.id)
            fail("the kernel profile " + opt.kernels->file + " was measured for chip \"" + opt.kernels->chip +
                     "\", the plan runs on \"" + chip.id + "\"",
                 "$.system");
        ctx.kernels = opt.kernels;
        r.efficiency_source = "kernel profile " + opt.kernels->file + " (measured on " + opt.kernels->device +
                              "): each op from its measured kernel, else the profile's fitted model for its kind";
    }
    const GroupRef dp_ref{lay.sizes, lay.dp, GroupRef::Part::all};
    ctx.tp = {lay.sizes, lay.tp, GroupRef::Part::all};
    ctx.cp = {lay.sizes, lay.cp, GroupRef::Part::all};
    // FSDP shards over the dp levels inside a slice; across slices (DCN) the shards are all-reduced (HSDP).
    ctx.fsdp = {lay.sizes, lay.dp, GroupRef::Part::inside_slice};
    const GroupRef dcn_ref{lay.sizes, lay.dp, GroupRef::Part::across_slices};
    const GroupRef pp_ref{lay.sizes, lay.pp, GroupRef::Part::all};
    const GroupNetwork dpnet = place_group(sys, lay.sizes, lay.dp);
    for (size_t gi : {lay.tp, lay.cp, lay.dp}) {
        const GroupNetwork g = place_group(sys, lay.sizes, gi);
        if (!g.placeable) fail(g.why_not, "$.parallel");
    }
    // Mixture of experts: the expert layout's groups (EP for the all-to-alls, etp, edp for expert gradients).
    const bool moe = m.moe.enabled();
    const ExpertLayout elay = expert_layout_for(sys, p);
    const GroupRef edp_ref{elay.sizes, elay.edp, GroupRef::Part::all};
    if (moe && r.feasible) {
        ctx.ep = {elay.sizes, elay.ep, GroupRef::Part::all};
        ctx.etp = {elay.sizes, elay.etp, GroupRef::Part::all};
        for (size_t gi : {elay.etp, elay.ep, elay.edp}) {
            const GroupNetwork g = place_group(sys, elay.sizes, gi);
            if (!g.placeable) fail("expert groups: " + g.why_not, "$.parallel.ep");
        }
    }
    if (!r.feasible) return r;  // split, placement and size rules: no well-formed task graph exists
    const GroupNetwork fsdpnet = part_of(dpnet, GroupRef::Part::inside_slice);
    const GroupNetwork dcnnet = part_of(dpnet, GroupRef::Part::across_slices);
    const int zero_shard = p.zero >= 1 ? (p.zero >= 3 ? fsdpnet.size() : p.dp) : 1;
    const NetLevel pp_link = neighbour_link(sys, lay.sizes, lay.pp);

    // --- per-layer and end costs -------------------------------------------------------------------------
    const LayerOps L = layer_ops(m, p);
    const LayerOps LM = moe ? layer_ops(m, p, true) : LayerOps{};
    const LayerOps E = embedding_ops(m, p);
    const LayerOps H = head_ops(m, p);
    std::vector<Op> back_with_recompute = L.recompute;
    back_with_recompute.insert(back_with_recompute.end(), L.backward.begin(), L.backward.end());
    double fsdp_fwd_s = 0, fsdp_bwd_s = 0;
    // FSDP gathers a layer's shards (the dense part's and the local experts'), the mean over the layers.
    const double layer_params_dev = fsdp_layer_params_per_device(m, p);
    if (p.zero >= 3 && fsdpnet.size() > 1) {
        fsdp_fwd_s = timer.cost(Collective::all_gather, layer_params_dev * p.param_gather_bytes, ctx.fsdp).time_s;
        fsdp_bwd_s = fsdp_fwd_s +
                     timer.cost(Collective::reduce_scatter, layer_params_dev * p.grad_reduce_bytes, ctx.fsdp).time_s;
    }
    const PassCost layer_f = pass_cost(L.forward, ctx, fsdp_fwd_s);
    const PassCost layer_b = pass_cost(back_with_recompute, ctx, fsdp_bwd_s);
    PassCost moe_f, moe_b;
    if (moe) {
        std::vector<Op> moe_back = LM.recompute;
        moe_back.insert(moe_back.end(), LM.backward.begin(), LM.backward.end());
        moe_f = pass_cost(LM.forward, ctx, fsdp_fwd_s);
        moe_b = pass_cost(moe_back, ctx, fsdp_bwd_s);
        r.layer_forward = op_timings(LM.forward, ctx);  // the reports show an MoE layer, the common one
        r.layer_backward = op_timings(moe_back, ctx);
    } else {
        r.layer_forward = op_timings(L.forward, ctx);
        r.layer_backward = op_timings(back_with_recompute, ctx);
    }
    const PassCost emb_f = pass_cost(E.forward, ctx), emb_b = pass_cost(E.backward, ctx);
    const PassCost head_f = pass_cost(H.forward, ctx), head_b = pass_cost(H.backward, ctx);

    // --- pipeline partition: layers per (stage, chunk); remainders go to the earliest chunks -----------------
    const int P = p.pp, v = p.vpp, nchunks = P * v;
    std::vector<int> layers_in(nchunks);
    for (int i = 0; i < nchunks; ++i) layers_in[i] = chunk_layers(m.layers, nchunks, i);
    auto model_chunk = [&](int s, int c) { return c * P + s; };
    std::vector<int> first_in(nchunks), moe_in(nchunks);
    for (int i = 0; i < nchunks; ++i) {
        first_in[i] = chunk_first_layer(m.layers, nchunks, i);
        moe_in[i] = m.moe_layers_in(first_in[i], layers_in[i]);
    }
    std::vector<double> stage_params(P, 0), stage_experts(P, 0);
    std::vector<int> stage_layers(P, 0), stage_moe(P, 0);
    for (int s = 0; s < P; ++s)
        for (int c = 0; c < v; ++c) {
            const int mc = model_chunk(s, c);
            stage_layers[s] += layers_in[mc];
            stage_moe[s] += moe_in[mc];
            stage_params[s] += m.layers_params(first_in[mc], layers_in[mc]);
            stage_experts[s] += m.routed_expert_params_in(first_in[mc], layers_in[mc]);
        }
    stage_params[0] += m.embedding_params();
    stage_params[P - 1] += m.output_params() + (m.tied_embeddings && P > 1 ? double(m.vocab) * m.hidden : 0);

    // --- memory on the busiest stage -----------------------------------------------------------------------
    {
        MemoryBreakdown worst;
        for (int s = 0; s < P; ++s) {
            MemoryInputs in;
            in.stage_params = stage_params[s];
            in.layers_on_stage = stage_layers[s];
            in.zero_shard = zero_shard;
            in.last_stage = s == P - 1;
            in.expert_params = stage_experts[s];
            in.moe_layers = stage_moe[s];
            in.expert_zero_shard = p.zero >= 1 ? p.edp() : 1;
            in.in_flight_microbatches = in_flight_microbatches(p, s, mbs);
            auto mem = memory_per_device(m, p, chip, in);
            if (mem.total_bytes > worst.total_bytes) worst = mem;
        }
        r.memory = worst;
        if (!worst.fits) {
            char buf[200];
            std::snprintf(buf, sizeof buf, "needs %.1f GiB per device but %s has %.1f GiB of HBM",
                          worst.total_bytes / (1ull << 30), chip.name.c_str(), worst.hbm_bytes / (1ull << 30));
            fail(buf, "$.batch.micro_batch");
        }
    }

    // --- networks used, for the report -----------------------------------------------------------------------
    const double act_bytes = double(p.micro_batch) * m.seq_len / p.cp * m.hidden * 2;
    // The algorithm named for each group is the closed form's choice, which both backends lower the same way
    // (asking the SimGrid backend here would simulate a collective the step never issues).
    auto describe = [&](const char* name, int size, const GroupRef& g, Collective c, double bytes) {
        if (size > 1) {
            const GroupNetwork net = place_group(sys, g.sizes, g.which);
            r.networks.push_back({name, size, net.describe(), collective_cost(c, bytes, net).algorithm});
        }
    };
    describe("tp", p.tp, ctx.tp, p.sp ? Collective::reduce_scatter : Collective::all_reduce, act_bytes);
    describe("cp", p.cp, ctx.cp, Collective::all_gather, act_bytes);
    const double grad_bytes_dev = stage_params[0] / p.tp * p.grad_reduce_bytes;
    describe("dp", p.dp, dp_ref, p.zero >= 1 ? Collective::reduce_scatter : Collective::all_reduce, grad_bytes_dev);
    if (P > 1) r.networks.push_back({"pp", P, pp_link.name, "p2p"});
    if (moe && p.ep > 1)
        describe("ep", p.ep, ctx.ep, Collective::all_to_all,
                 act_bytes / p.tp * m.moe.top_k);  // one micro-batch's dispatch from one rank

    if (!r.feasible && opt.skip_engine_if_infeasible) return r;

    // --- the task graph ---------------------------------------------------------------------------------------
    TaskGraph g;
    g.category_names = {"compute", "exposed collectives", "optimizer", "side-stream communication"};
    const int M = static_cast<int>(mbs);
    std::vector<uint32_t> s_comp(P), s_fsend(P), s_bsend(P), s_dp(P);
    for (int s = 0; s < P; ++s) {
        s_comp[s] = g.add_stream("stage" + std::to_string(s) + ".compute");
        s_fsend[s] = g.add_stream("stage" + std::to_string(s) + ".send_fwd");
        s_bsend[s] = g.add_stream("stage" + std::to_string(s) + ".send_bwd");
        s_dp[s] = g.add_stream("stage" + std::to_string(s) + ".dp");
    }
    // Cost classes per (stage, chunk).
    std::vector<uint32_t> cF(P * v), cB(P * v), cBpiece(P * v), cDPpiece(P * v);
    std::vector<int> pieces(P * v, 1);
    const bool dp_sync = p.dp > 1 && p.zero < 3;
    const bool dcn_sync = p.zero >= 3 && dcnnet.size() > 1;
    const bool bucketed = (dp_sync || dcn_sync) && p.dp_overlap;
    // Gradients of routed experts are reduced over the expert data-parallel group, the rest over data parallelism.
    auto expert_sync_s = [&](double expert_params_dev) {
        if (expert_params_dev <= 0 || p.edp() <= 1) return 0.0;
        return timer.cost(p.zero >= 1 ? Collective::reduce_scatter : Collective::all_reduce,
                          expert_params_dev * p.grad_reduce_bytes, edp_ref).time_s;
    };
    auto grad_sync_s = [&](double params_dev) {
        if (dp_sync) {
            const CollectiveTimer::Traffic sync{p.zero >= 1 ? Collective::reduce_scatter : Collective::all_reduce,
                                                params_dev * p.grad_reduce_bytes, dp_ref};
            // A bucketed sync runs while the backward goes on: its pipeline sends and TP collectives share links
            // with it (the SimGrid backend measures that; the analytical one ignores it).
            std::vector<CollectiveTimer::Traffic> during;
            if (bucketed && P > 1) during.push_back({Collective::send_recv, act_bytes / p.tp, pp_ref});
            if (bucketed && p.tp > 1)
                during.push_back({p.sp ? Collective::reduce_scatter : Collective::all_reduce, act_bytes, ctx.tp});
            return timer.cost_with(sync, during).time_s;
        }
        if (dcn_sync)  // HSDP: each chip's FSDP shard all-reduced across slices
            return timer.cost(Collective::all_reduce, params_dev / fsdpnet.size() * p.grad_reduce_bytes, dcn_ref).time_s;
        return 0.0;
    };
    for (int s = 0; s < P; ++s) {
        for (int c = 0; c < v; ++c) {
            const int mc = model_chunk(s, c), nl = layers_in[mc], nm = moe_in[mc], nd = nl - nm;
            double f = nd * layer_f.time_s + nm * moe_f.time_s, fe = nd * layer_f.exposed_comm_s + nm * moe_f.exposed_comm_s;
            double b = nd * layer_b.time_s + nm * moe_b.time_s, be = nd * layer_b.exposed_comm_s + nm * moe_b.exposed_comm_s;
            const double chunk_experts = m.routed_expert_params_in(first_in[mc], nl);
            double chunk_params = m.layers_params(first_in[mc], nl) - chunk_experts;
            if (mc == 0) f += emb_f.time_s, fe += emb_f.exposed_comm_s, b += emb_b.time_s, be += emb_b.exposed_comm_s,
                         chunk_params += m.embedding_params();
            if (mc == nchunks - 1) f += head_f.time_s, fe += head_f.exposed_comm_s, b += head_b.time_s,
                                   be += head_b.exposed_comm_s, chunk_params += m.output_params();
            const int idx = s * v + c;
            cF[idx] = g.add_cost_class(make_class("F s" + std::to_string(s) + " c" + std::to_string(c), f, fe));
            cB[idx] = g.add_cost_class(make_class("B s" + std::to_string(s) + " c" + std::to_string(c), b, be));
            pieces[idx] = bucketed ? std::clamp(nl, 1, 16) : 1;
            const double sync = grad_sync_s(chunk_params / p.tp) +
                                expert_sync_s(chunk_experts / (p.ep * p.expert_tp()));
            // A bucket's gradient sync overlaps the next backward piece and slows it (shared SMs / HBM).
            const double slowdown = bucketed ? chip.eff.comm_interference_fraction * std::min(sync, b) / pieces[idx] : 0;
            cBpiece[idx] = g.add_cost_class(make_class("B piece", b / pieces[idx] + slowdown, be / pieces[idx]));
            cDPpiece[idx] = g.add_cost_class(make_class("grad sync", sync / pieces[idx], 0, kSideComm));
        }
    }
    const double p2p_bytes = act_bytes / (p.tp > 1 ? p.tp : 1);  // scatter/gather across TP ranks (Megatron)
    const double p2p_s = P > 1 ? timer.cost(Collective::send_recv, p2p_bytes, pp_ref).time_s : 0;
    const uint32_t cP2P = g.add_cost_class(make_class("p2p", p2p_s, 0, kSideComm));

    // Compute tasks in each stage's program order.
    // P v M <= --max-tasks / 4 < 2^29 (check_split): the indices below fit an int.
    std::vector<uint32_t> Fin(size_t(P) * v * M), Bin(size_t(P) * v * M), Bout(size_t(P) * v * M);
    auto key = [&](int s, int c, int i) { return (s * v + c) * M + i; };
    std::vector<std::vector<uint32_t>> dp_tasks(P);
    std::vector<uint32_t> last_compute(P);
    g.reserve(size_t(P) * v * M * 4 + 64, size_t(P) * v * M * 4 + 64);
    for (int s = 0; s < P; ++s) {
        const auto order = stage_order(p, s, M);
        std::vector<int> last_b(v, -1);
        for (size_t k = 0; k < order.size(); ++k)
            if (!order[k].fwd) last_b[order[k].chunk] = static_cast<int>(k);
        for (size_t k = 0; k < order.size(); ++k) {
            const auto& o = order[k];
            const int idx = s * v + o.chunk;
            const int kk = key(s, o.chunk, o.mb);
            if (o.fwd) {
                Fin[kk] = g.add_task(s_comp[s], cF[idx], kk);
            } else if (static_cast<int>(k) == last_b[o.chunk] && (bucketed || !dp_sync)) {
                uint32_t first = 0, t = 0;
                for (int piece = 0; piece < pieces[idx]; ++piece) {
                    t = g.add_task(s_comp[s], cBpiece[idx], kk);
                    if (piece == 0) first = t;
                    if (bucketed) {
                        uint32_t d = g.add_task(s_dp[s], cDPpiece[idx], kk);
                        g.add_dependency(t, d);
                        dp_tasks[s].push_back(d);
                    }
                }
                Bin[kk] = first, Bout[kk] = t;
            } else {
                Bin[kk] = Bout[kk] = g.add_task(s_comp[s], cB[idx], kk);
            }
        }
        last_compute[s] = static_cast<uint32_t>(g.task_count() - 1);
        while (g.tasks()[last_compute[s]].stream != s_comp[s]) --last_compute[s];
    }
    // Pipeline edges through send tasks.
    for (int s = 0; s < P; ++s) {
        const auto order = stage_order(p, s, M);
        for (const auto& o : order) {
            const int mc = model_chunk(s, o.chunk);
            if (o.fwd && mc + 1 < nchunks) {
                const int ns = (s + 1) % P, nc = s + 1 < P ? o.chunk : o.chunk + 1;
                const uint32_t send = g.add_task(s_fsend[s], cP2P);
                g.add_dependency(Fin[key(s, o.chunk, o.mb)], send);
                g.add_dependency(send, Fin[key(ns, nc, o.mb)]);
            }
            if (!o.fwd && mc > 0) {
                const int ps = (s + P - 1) % P, pc = s > 0 ? o.chunk : o.chunk - 1;
                const uint32_t send = g.add_task(s_bsend[s], cP2P);
                g.add_dependency(Bout[key(s, o.chunk, o.mb)], send);
                g.add_dependency(send, Bin[key(ps, pc, o.mb)]);
            }
            if (o.fwd && mc == nchunks - 1) g.add_dependency(Fin[key(s, o.chunk, o.mb)], Bin[key(s, o.chunk, o.mb)]);
        }
    }
    // Gradient sync (unbucketed: one transfer after the pipeline flush, as Megatron's "local" DDP), optimizer,
    // and the parameter all-gather of a distributed optimizer.
    std::vector<uint32_t> opt_task(P), tail_task(P);
    for (int s = 0; s < P; ++s) {
        if ((dp_sync || dcn_sync) && !bucketed) {  // after the flush (Megatron's "local" DDP); HSDP across slices too
            double params_dev = (stage_params[s] - stage_experts[s]) / p.tp;
            const double sync = grad_sync_s(params_dev) + expert_sync_s(stage_experts[s] / (p.ep * p.expert_tp()));
            const uint32_t cls = g.add_cost_class(make_class("grad sync", sync, 0, kSideComm));
            const uint32_t d = g.add_task(s_dp[s], cls);
            g.add_dependency(last_compute[s], d);
            dp_tasks[s].push_back(d);
        }
        const double shard = (stage_params[s] - stage_experts[s]) / p.tp / zero_shard +
                             stage_experts[s] / (p.ep * p.expert_tp()) / (p.zero >= 1 ? p.edp() : 1);
        const double opt_s = optimizer_time_s(shard, p, chip, ctx.kernels);
        const uint32_t co = g.add_cost_class(make_class("optimizer", opt_s, 0, kOptimizer));
        opt_task[s] = g.add_task(s_comp[s], co);
        for (uint32_t d : dp_tasks[s]) g.add_dependency(d, opt_task[s]);
        tail_task[s] = opt_task[s];
        if (p.zero >= 1 && p.zero < 3 && p.dp > 1 && !p.param_gather_overlap) {
            const double ag = timer.cost(Collective::all_gather, stage_params[s] / p.tp * 2, dp_ref).time_s;
            const uint32_t ca = g.add_cost_class(make_class("param all-gather", ag, 0, kSideComm));
            tail_task[s] = g.add_task(s_dp[s], ca);
            g.add_dependency(opt_task[s], tail_task[s]);
        }
    }

    r.network_backend = timer.backend() == NetworkBackend::analytical
                            ? "analytical (closed-form alpha-beta per topology level)"
                            : "simgrid (" + std::to_string(timer.simulations()) +
                                  " flow-level simulations of every group instance, cached per collective)";
    EngineOptions eo;
    eo.record_timeline = opt.record_timeline;
    r.sim = run_engine(g, eo);
    r.simulated_tasks = g.task_count();
    if (opt.record_timeline) {
        r.timeline.reserve(r.sim.timeline.size());
        for (const Span& sp : r.sim.timeline) {
            const Task& t = g.tasks()[sp.task];
            const CostClass& c = g.cost_classes()[t.cost_class];
            const std::string& sn = g.stream_names[t.stream];
            TimelineSpan ts;
            ts.stage = static_cast<int>(t.stream / 4);  // four streams per stage, added in order above
            ts.stream = sn.substr(sn.find('.') + 1);
            ts.label = c.label;
            if (ts.stream == "compute" && (c.label[0] == 'F' || c.label[0] == 'B') && M > 0)
                ts.label += " mb" + std::to_string(t.tag % M);
            ts.start_s = sp.start_s, ts.finish_s = sp.finish_s;
            ts.compute_s = c.parts_s[kCompute], ts.exposed_comm_s = c.parts_s[kExposedComm];
            ts.optimizer_s = c.parts_s[kOptimizer], ts.side_comm_s = c.parts_s[kSideComm];
            r.timeline.push_back(std::move(ts));
        }
    }
    r.step_time_s = r.sim.makespan_s;
    r.micro_batches = mbs;

    // --- breakdown on the critical stage -----------------------------------------------------------------------
    const auto& start = r.sim.start_s;
    const auto& finish = r.sim.finish_s;
    int crit = 0;
    double latest = -1;
    for (int s = 0; s < P; ++s)
        if (finish[tail_task[s]] > latest) latest = finish[tail_task[s]], crit = s;
    r.critical_stage = crit;
    const auto& cs = r.sim.streams[s_comp[crit]];
    r.breakdown.compute_s = cs.by_category_s[kCompute];
    r.breakdown.optimizer_s = cs.by_category_s[kOptimizer];
    const double sync_wait = std::max(0.0, start[opt_task[crit]] - finish[last_compute[crit]]) +
                             std::max(0.0, r.step_time_s - finish[opt_task[crit]]);
    r.breakdown.exposed_comm_s = cs.by_category_s[kExposedComm] + sync_wait;
    r.breakdown.bubble_s = std::max(0.0, r.step_time_s - cs.busy_s - sync_wait);

    // --- throughput and utilization ----------------------------------------------------------------------------
    r.tokens_per_step = double(p.global_batch) * m.seq_len;
    r.tokens_per_s = r.tokens_per_step / r.step_time_s;
    r.model_flops_per_step = r.tokens_per_step * model_flops_per_token(m);
    const int moe_total = m.moe_layers_in(0, m.layers);
    // Executed FLOPs count the mean expert rank: the busiest one's skew is time, not extra work.
    double moe_flops = moe_f.flops + moe_b.flops;
    if (moe && m.moe.load_imbalance > 1) {
        ModelSpec even = m;
        even.moe.load_imbalance = 1;
        const LayerOps LE = layer_ops(even, p, true);
        moe_flops = total_flops(LE.forward) + total_flops(LE.recompute) + total_flops(LE.backward);
    }
    const double per_mb_device = (m.layers - moe_total) * (layer_f.flops + layer_b.flops) + moe_total * moe_flops +
                                 emb_f.flops + emb_b.flops + head_f.flops + head_b.flops;  // one pipeline
    r.hardware_flops_per_step = per_mb_device * double(mbs) * p.dp * p.tp * p.cp;
    r.peak_flops_per_s = chip.peak_bf16_flops_per_s;
    r.peak_name = chip.name + " dense bf16 peak";
    const double denom = double(sys.chips) * r.peak_flops_per_s * r.step_time_s;
    r.mfu = r.model_flops_per_step / denom;
    r.mfu_causal = r.tokens_per_step * model_flops_per_token(m, true) / denom;
    r.hfu = r.hardware_flops_per_step / denom;
    check_physical(r, p, utilization_ceiling(chip, p.precision));
    return r;
}

}  // namespace podsim
