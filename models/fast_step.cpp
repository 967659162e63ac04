#include "models/fast_step.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "models/layer_ops.hpp"
#include "models/memory.hpp"
#include "sim/collectives.hpp"

namespace podsim {

const char* to_string(Reject r) {
    switch (r) {
        case Reject::none: return "none";
        case Reject::split: return "split";
        case Reject::placement: return "placement";
        case Reject::memory: return "memory";
    }
    return "?";
}

StepEstimator::StepEstimator(const ModelSpec& m, const SystemSpec& sys, bool use_profiles, SimBudget budget)
    : budget_(budget), m_(m), sys_(sys), timer_(sys_, NetworkBackend::analytical) {
    std::string source;
    ParallelPlan p;
    p.precision = Precision::bf16;
    bf16_ = resolve_efficiency(sys_, p, use_profiles, 0, source);
    p.precision = Precision::fp8;
    fp8_ = resolve_efficiency(sys_, p, use_profiles, 0, source);
    flops_per_token_ = model_flops_per_token(m_);
    dense_layer_params_ = m_.dense_layer_params();
    moe_layer_params_ = m_.moe.enabled() ? m_.moe_layer_params() : 0;
    routed_params_per_moe_layer_ = m_.moe.enabled() ? double(m_.moe.experts) * m_.expert_params() : 0;
    moe_prefix_.assign(m_.layers + 1, 0);
    for (int i = 0; i < m_.layers; ++i) moe_prefix_[i + 1] = moe_prefix_[i] + m_.is_moe_layer(i);
}

StepEstimator::LayoutEntry& StepEstimator::layout(const ParallelPlan& p) {
    const std::pair<uint64_t, uint64_t> key{uint64_t(p.tp) | uint64_t(p.cp) << 16 | uint64_t(p.pp) << 32 | uint64_t(p.dp) << 48,
                                            uint64_t(p.ep) | uint64_t(p.expert_tp()) << 32};
    auto it = layouts_.find(key);
    if (it != layouts_.end()) return it->second;
    LayoutEntry& e = layouts_[key];
    const Layout lay = layout_for(sys_, p);
    e.tp = {lay.sizes, lay.tp, GroupRef::Part::all};
    e.cp = {lay.sizes, lay.cp, GroupRef::Part::all};
    e.dp = {lay.sizes, lay.dp, GroupRef::Part::all};
    e.fsdp = {lay.sizes, lay.dp, GroupRef::Part::inside_slice};
    e.dcn = {lay.sizes, lay.dp, GroupRef::Part::across_slices};
    e.pp = {lay.sizes, lay.pp, GroupRef::Part::all};
    for (size_t gi : {lay.tp, lay.cp, lay.dp})
        if (!place_group(sys_, lay.sizes, gi).placeable) e.placeable = false;
    if (!e.placeable) return e;
    e.dpnet = timer_.network(e.dp);
    e.fsdpnet = timer_.network(e.fsdp);
    e.dcnnet = timer_.network(e.dcn);
    const NetLevel l = neighbour_link(sys_, lay.sizes, lay.pp);
    e.p2p_bytes_per_s = l.bytes_per_s, e.p2p_latency_s = l.latency_s;
    if (m_.moe.enabled()) {
        const ExpertLayout el = expert_layout_for(sys_, p);
        for (size_t gi : {el.etp, el.ep, el.edp})
            if (!place_group(sys_, el.sizes, gi).placeable) e.placeable = false;
        if (!e.placeable) return e;
        e.ep = {el.sizes, el.ep, GroupRef::Part::all};
        e.etp = {el.sizes, el.etp, GroupRef::Part::all};
        e.edpnet = timer_.network({el.sizes, el.edp, GroupRef::Part::all});
    }
    return e;
}

const StepEstimator::LayerEntry& StepEstimator::layer(const ParallelPlan& p, LayoutEntry& lay) {
    // Everything layer_ops reads from the plan besides the layout.
    const uint64_t key = uint64_t(p.micro_batch) | uint64_t(p.sp) << 40 | uint64_t(p.precision) << 41 |
                         uint64_t(p.recompute) << 44 | uint64_t(p.attention) << 47 | uint64_t(p.tp_comm_overlap) << 49 |
                         uint64_t(p.ep_overlap) << 52 | uint64_t(p.cp_algorithm) << 53;
    auto it = lay.layers.find(key);
    if (it != lay.layers.end()) return it->second;
    ++layer_entries_;
    LayerEntry& e = lay.layers[key];
    CostContext ctx;
    ctx.chip = &chip_for(p);
    ctx.plan = &p;
    ctx.timer = &timer_;
    ctx.tp = lay.tp, ctx.cp = lay.cp, ctx.fsdp = lay.fsdp, ctx.ep = lay.ep, ctx.etp = lay.etp;
    const LayerOps L = layer_ops(m_, p), E = embedding_ops(m_, p), H = head_ops(m_, p);
    std::vector<Op> back = L.recompute;
    back.insert(back.end(), L.backward.begin(), L.backward.end());
    e.fwd = pass_sums(L.forward, ctx);
    e.bwd = pass_sums(back, ctx);
    e.emb_f = pass_sums(E.forward, ctx), e.emb_b = pass_sums(E.backward, ctx);
    e.head_f = pass_sums(H.forward, ctx), e.head_b = pass_sums(H.backward, ctx);
    if (m_.moe.enabled()) {
        const LayerOps LM = layer_ops(m_, p, true);
        std::vector<Op> mback = LM.recompute;
        mback.insert(mback.end(), LM.backward.begin(), LM.backward.end());
        e.moe_fwd = pass_sums(LM.forward, ctx);
        e.moe_bwd = pass_sums(mback, ctx);
        e.moe_flops_mean = e.moe_fwd.flops + e.moe_bwd.flops;
        if (m_.moe.load_imbalance > 1) {
            ModelSpec even = m_;
            even.moe.load_imbalance = 1;
            const LayerOps LE = layer_ops(even, p, true);
            e.moe_flops_mean = total_flops(LE.forward) + total_flops(LE.recompute) + total_flops(LE.backward);
        }
    }
    e.act_bytes = double(p.micro_batch) * m_.seq_len / p.cp * m_.hidden * 2;
    e.layer_act_bytes = layer_activation_bytes(m_, p);
    return e;
}

double StepEstimator::one_f_one_b_small(long long M, double t) {
    const int P = static_cast<int>(stages_.size());
    const int m = static_cast<int>(M);
    // Pass j of stage s in 1F1B order (as stage_order): warm-up forwards, forward/backward pairs, the rest backwards.
    auto pass = [&](int s, int j) -> std::pair<bool, int> {
        const int warm = std::min(P - s - 1, m), pairs_end = warm + 2 * (m - warm);
        if (j < warm) return {true, j};
        if (j < pairs_end) return (j - warm) % 2 == 0 ? std::pair{true, warm + (j - warm) / 2}
                                                      : std::pair{false, (j - warm) / 2};
        return {false, m - warm + (j - pairs_end)};
    };
    // Scratch kept across calls: the planner evaluates many such plans, allocation-free after the first.
    f_end_.assign(size_t(P) * m, -1), b_end_.assign(size_t(P) * m, -1), free_at_.assign(P, 0), next_.assign(P, 0);
    size_t left = size_t(2) * P * m;
    double end = 0;
    while (left > 0) {
        bool progressed = false;
        for (int s = 0; s < P; ++s) {
            while (next_[s] < 2 * m) {
                const auto [fwd, i] = pass(s, next_[s]);
                // Input: the previous stage's forward (stage 0: none), the next stage's backward (last stage: its
                // own forward, already done in its order).
                double ready = 0;
                if (fwd && s > 0) {
                    if (f_end_[size_t(s - 1) * m + i] < 0) break;
                    ready = f_end_[size_t(s - 1) * m + i] + t;
                } else if (!fwd && s < P - 1) {
                    if (b_end_[size_t(s + 1) * m + i] < 0) break;
                    ready = b_end_[size_t(s + 1) * m + i] + t;
                }
                const double done = std::max(free_at_[s], ready) + (fwd ? stages_[s].F : stages_[s].B);
                (fwd ? f_end_ : b_end_)[size_t(s) * m + i] = done;
                free_at_[s] = done, end = std::max(end, done);
                ++next_[s], --left, progressed = true;
            }
        }
        if (!progressed) break;  // cannot happen for 1F1B orders; guards against an endless loop
    }
    return end;
}

StepEstimate StepEstimator::estimate(const ParallelPlan& p) {
    StepEstimate r;
    const ChipSpec& chip = chip_for(p);
    bool split_ok = true;
    check_split(m_, sys_, p, chip, [&](std::string, const char*) { split_ok = false; }, budget_);
    if (!split_ok) {
        r.reject = Reject::split;
        return r;
    }
    LayoutEntry& lay = layout(p);
    if (!lay.placeable) {
        r.reject = Reject::placement;
        return r;
    }
    const int P = p.pp, v = p.vpp, nchunks = P * v;
    const long long M = p.global_batch / (p.micro_batch * p.dp);
    const int zero_shard = p.zero >= 1 ? (p.zero >= 3 ? lay.fsdpnet.size() : p.dp) : 1;

    // --- memory: stage 0 holds the most activations (and the remainder layers), the last stage the logits ---------
    auto stage_layers = [&](int s) {
        int n = 0;
        for (int c = 0; c < v; ++c) n += chunk_layers(m_.layers, nchunks, c * P + s);
        return n;
    };
    // Layers [first, first + n): how many are MoE layers, their parameters and the routed experts' share.
    auto moe_count = [&](int first, int n) { return moe_prefix_[first + n] - moe_prefix_[first]; };
    auto range_params = [&](int first, int n) {
        const int nm = moe_count(first, n);
        return nm * moe_layer_params_ + (n - nm) * dense_layer_params_;
    };
    auto stage_moe = [&](int s) {
        int n = 0;
        for (int c = 0; c < v; ++c) {
            const int mc = c * P + s;
            n += moe_count(chunk_first_layer(m_.layers, nchunks, mc), chunk_layers(m_.layers, nchunks, mc));
        }
        return n;
    };
    auto stage_params = [&](int s, int n_layers, int n_moe) {
        double params = n_moe * moe_layer_params_ + (n_layers - n_moe) * dense_layer_params_;
        if (s == 0) params += m_.embedding_params();
        if (s == P - 1) params += m_.output_params() + (m_.tied_embeddings && P > 1 ? double(m_.vocab) * m_.hidden : 0);
        return params;
    };
    // (With MoE layers after dense ones the busiest stage can be any: check them all.)
    for (int s = 0; s < P; s = (m_.moe.enabled() || s == P - 1) ? s + 1 : P - 1) {
        MemoryInputs in;
        in.layers_on_stage = stage_layers(s);
        in.moe_layers = stage_moe(s);
        in.stage_params = stage_params(s, in.layers_on_stage, in.moe_layers);
        in.expert_params = in.moe_layers * routed_params_per_moe_layer_;
        in.expert_zero_shard = p.zero >= 1 ? p.edp() : 1;
        in.zero_shard = zero_shard;
        in.last_stage = s == P - 1;
        in.in_flight_microbatches = in_flight_microbatches(p, s, M);
        const MemoryBreakdown mem = memory_per_device(m_, p, chip, in);
        if (mem.total_bytes > r.memory_bytes) r.memory_bytes = mem.total_bytes, r.hbm_bytes = mem.hbm_bytes;
    }
    if (r.memory_bytes > r.hbm_bytes) {
        r.reject = Reject::memory;
        return r;
    }

    // --- per-pass costs, as simulate_step times them ----------------------------------------------------------------
    const LayerEntry& le = layer(p, lay);
    double fsdp_fwd_s = 0, fsdp_bwd_s = 0;
    if (p.zero >= 3 && lay.fsdpnet.size() > 1) {
        const double layer_params_dev = fsdp_layer_params_per_device(m_, p);
        fsdp_fwd_s = collective_cost(Collective::all_gather, layer_params_dev * p.param_gather_bytes, lay.fsdpnet).time_s;
        fsdp_bwd_s = fsdp_fwd_s +
                     collective_cost(Collective::reduce_scatter, layer_params_dev * p.grad_reduce_bytes, lay.fsdpnet).time_s;
    }
    const PassCost lf = finish_pass(le.fwd, chip, fsdp_fwd_s), lb = finish_pass(le.bwd, chip, fsdp_bwd_s);
    const PassCost ef = finish_pass(le.emb_f, chip), eb = finish_pass(le.emb_b, chip);
    const PassCost hf = finish_pass(le.head_f, chip), hb = finish_pass(le.head_b, chip);
    const bool moe = m_.moe.enabled();
    const PassCost mf = moe ? finish_pass(le.moe_fwd, chip, fsdp_fwd_s) : PassCost{};
    const PassCost mb = moe ? finish_pass(le.moe_bwd, chip, fsdp_bwd_s) : PassCost{};
    const double expert_shard = double(p.ep) * p.expert_tp();
    const double p2p_s =
        P > 1 && lay.p2p_bytes_per_s > 0 ? le.act_bytes / p.tp / lay.p2p_bytes_per_s + lay.p2p_latency_s : 0;

    // --- gradient synchronization (bucketed under the last backward of each chunk, or after the flush) ---------
    const bool dp_sync = p.dp > 1 && p.zero < 3;
    const bool dcn_sync = p.zero >= 3 && lay.dcnnet.size() > 1;
    const bool bucketed = (dp_sync || dcn_sync) && p.dp_overlap;
    auto sync_s = [&](double params_dev) {
        if (dp_sync)
            return collective_cost(p.zero >= 1 ? Collective::reduce_scatter : Collective::all_reduce,
                                   params_dev * p.grad_reduce_bytes, lay.dpnet).time_s;
        if (dcn_sync)
            return collective_cost(Collective::all_reduce, params_dev / lay.fsdpnet.size() * p.grad_reduce_bytes,
                                   lay.dcnnet).time_s;
        return 0.0;
    };
    // Chunks differ only by their layer count (two values) and the embedding / head ends: remember the last few.
    struct SyncMemo { double params = -1, s = 0; } memo[4];
    auto expert_sync_s = [&](double expert_params_dev) {
        if (expert_params_dev <= 0 || p.edp() <= 1) return 0.0;
        return collective_cost(p.zero >= 1 ? Collective::reduce_scatter : Collective::all_reduce,
                               expert_params_dev * p.grad_reduce_bytes, lay.edpnet).time_s;
    };
    auto chunk_sync_s = [&](double params_dev, double experts_dev) {
        for (auto& e : memo)
            if (e.params == params_dev + 1e-3 * experts_dev) return e.s;
        std::rotate(memo, memo + 3, memo + 4);
        memo[0] = {params_dev + 1e-3 * experts_dev, sync_s(params_dev) + expert_sync_s(experts_dev)};
        return memo[0].s;
    };

    // --- per stage: work per micro-batch (F, B over its chunks) -------------------------------------------------
    // Chunk c of stage s is model chunk c P + s; chunk 0 of stage 0 holds the embedding, the last model chunk the
    // head. A chunk's last backward carries its gradient buckets and is slowed by them (shared SMs / HBM).
    double sum_fb = 0, sum_f = 0, sum_b = 0;
    stages_.resize(P);
    for (int s = 0; s < P; ++s) {
        StageWork& w = stages_[s];
        w = StageWork{};
        w.layers = 0;
        for (int c = 0; c < v; ++c) {
            const int mc = c * P + s, nl = chunk_layers(m_.layers, nchunks, mc);
            const int first = chunk_first_layer(m_.layers, nchunks, mc), nm = moe_count(first, nl), nd = nl - nm;
            double f = nd * lf.time_s + nm * mf.time_s, fe = nd * lf.exposed_comm_s + nm * mf.exposed_comm_s;
            double b = nd * lb.time_s + nm * mb.time_s, be = nd * lb.exposed_comm_s + nm * mb.exposed_comm_s;
            const double experts = nm * routed_params_per_moe_layer_;
            double params = range_params(first, nl) - experts;
            w.moe_layers += nm;
            if (mc == 0) f += ef.time_s, fe += ef.exposed_comm_s, b += eb.time_s, be += eb.exposed_comm_s,
                         params += m_.embedding_params();
            if (mc == nchunks - 1) f += hf.time_s, fe += hf.exposed_comm_s, b += hb.time_s, be += hb.exposed_comm_s,
                                   params += m_.output_params();
            w.F += f, w.B += b, w.Fe += fe, w.Be += be;
            w.layers += nl;
            // Chunks beyond kMaxChunks (vpp > 16, unusual) are lumped into the last slot.
            const int k = std::min(c, kMaxChunks - 1);
            const double sync = bucketed ? chunk_sync_s(params / p.tp, experts / expert_shard) : 0;
            const double slow = bucketed ? chip.eff.comm_interference_fraction * std::min(sync, b) : 0;
            w.chunk_b[k] += b + slow;
            w.chunk_sync[k] += sync;
            w.chunk_pieces[k] = std::max(w.chunk_pieces[k], std::clamp(nl, 1, 16));
            w.slowdown += slow;
        }
        sum_fb += w.F + w.B, sum_f += w.F, sum_b += w.B;
    }

    // --- the pipeline schedule in closed form ----------------------------------------------------------------
    // A pipeline of identical micro-batches is a flow shop: the step is set by the stage k whose M micro-batches
    // run back to back, plus the first micro-batch reaching it and the last one leaving the rest of the pipeline.
    // 1F1B: in steady state a stage also waits one send per forward-backward pair (its backward needs the next
    // stage's backward, which needed this stage's forward: period F + B + t). Interleaved: the other stages' share
    // shrinks by v and the extra warm-up micro-batches hide the sends (Narayanan et al. 2021, sec. 2.2).
    // GPipe: the same for all forwards, then all backwards.
    const double t = P > 1 ? p2p_s : 0;
    double pipe_s = 0;
    if (P == 1) {
        pipe_s = double(M) * sum_fb;
    } else if (p.schedule == Schedule::gpipe) {
        double fwd = 0, bwd = 0;
        for (int k = 0; k < P; ++k) {
            fwd = std::max(fwd, (double(M) * v - 1) * stages_[k].F / v + sum_f / v);
            bwd = std::max(bwd, (double(M) * v - 1) * stages_[k].B / v + sum_b / v);
        }
        pipe_s = fwd + bwd + 2 * (P - 1) * t;
    } else if (v == 1 && M < P) {
        // Fewer micro-batches than stages: no stage reaches a steady state, so the flow-shop bound below (which
        // hides each round trip under P-1-k warm-up forwards) does not hold. The schedule is short (2 M P
        // passes): play it out, each stage taking its passes in 1F1B order as stage_order does, each pass
        // starting when its stage is free and its input has arrived (one hand-off t later).
        pipe_s = one_f_one_b_small(M, t);
    } else if (v == 1) {
        // Stage k is the bottleneck: the first forward reaches it after the stages before it (A); it runs its
        // P-k warm-up forwards and then waits (W) for the first backward, which needs the forward and backward of
        // every later stage; then it is never starved (M F+B back to back), and after its last forward the last
        // micro-batch still has to go round the later stages (R) and back to stage 0 (D). Exact for identical
        // stages ((M + P - 1)(F + B)); for unequal stages (remainder layers, embedding and head) it follows the
        // heaviest stage instead of charging every stage's full share to the fill.
        double before_f = 0, before_b = 0;  // sums over stages < k
        const double M_d = double(M);
        for (int k = 0; k < P; ++k) {
            const StageWork& w = stages_[k];
            const double after_f = sum_f - before_f - w.F, after_b = sum_b - before_b - w.B;  // stages > k
            const double wait = std::max(0.0, after_f + after_b - (P - 1 - k) * w.F);
            const double busy = M_d * (w.F + w.B);
            const double tail = std::max(0.0, after_f + after_b - (P - 1 - k) * w.B);
            pipe_s = std::max(pipe_s, before_f + wait + busy + tail + before_b);
            before_f += w.F, before_b += w.B;
        }
        pipe_s += double(M - 1) * t + 2 * (P - 1) * t;
    } else {
        for (int k = 0; k < P; ++k) {
            const double fb = stages_[k].F + stages_[k].B;
            pipe_s = std::max(pipe_s, double(M) * fb + (sum_fb - fb) / v);
        }
        // The first micro-batch's forward and the last one's backward pass every model chunk: P v - 1 hand-offs.
        pipe_s += 2 * (P * v - 1) * t;
    }

    // --- each stage's end, its gradient sync, optimizer and parameter gather --------------------------------
    // The last micro-batch's chunk-0 backward travels from the last stage to stage 0, so stage s ends that many
    // backward hops before stage 0.
    // A chunk's last backward is slowed by its gradient buckets, and those backwards chain through the stages in
    // the flush: every slowdown upstream of stage s on that chain delays its end.
    double total_slowdown = 0;
    for (int s = 0; s < P; ++s) total_slowdown += stages_[s].slowdown;
    double ahead_s = 0;  // time stage s ends before stage 0
    int crit = 0;
    double step_s = 0, crit_end = 0, crit_opt_start = 0, crit_opt = 0;
    for (int s = 0; s < P; ++s) {
        const StageWork& w = stages_[s];
        const double end_s = pipe_s - ahead_s + total_slowdown;
        ahead_s += w.chunk_b[0] + t;  // chunk_b includes the slowdown of stage s, which stages above s do not see
        double sync_end = end_s;
        if ((dp_sync || dcn_sync) && !bucketed) {  // after the flush (Megatron's "local" DDP); HSDP across slices too
            const double experts = w.moe_layers * routed_params_per_moe_layer_;
            sync_end = end_s + sync_s((stage_params(s, w.layers, w.moe_layers) - experts) / p.tp) +
                       expert_sync_s(experts / expert_shard);
        } else if (bucketed) {
            // Chunk c's last backward is followed by the P backwards of each lower chunk (interleaved cooldown).
            // Its buckets go out piece by piece: done at max(previous chunks' syncs + this one, its end + the
            // part that did not fit under its own pieces).
            double finish = 0, after = 0;
            std::array<double, kMaxChunks> e{};
            for (int c = 0; c < std::min(v, kMaxChunks); ++c) {
                e[c] = end_s - after;
                after += P * w.chunk_b[c];
            }
            for (int c = std::min(v, kMaxChunks) - 1; c >= 0; --c) {
                const double n = w.chunk_pieces[c], sync = w.chunk_sync[c], bp = w.chunk_b[c] / n;
                finish = std::max(finish + sync, e[c] + std::max(sync / n, sync - (n - 1) * bp));
            }
            sync_end = std::max(end_s, finish);
        }
        const double experts = w.moe_layers * routed_params_per_moe_layer_;
        const double shard = (stage_params(s, w.layers, w.moe_layers) - experts) / p.tp / zero_shard +
                             experts / expert_shard / (p.zero >= 1 ? p.edp() : 1);
        const double opt_s = optimizer_time_s(shard, p, chip, nullptr);
        double done = sync_end + opt_s;
        if (p.zero >= 1 && p.zero < 3 && p.dp > 1 && !p.param_gather_overlap)
            done += collective_cost(Collective::all_gather, stage_params(s, w.layers, w.moe_layers) / p.tp * 2, lay.dpnet).time_s;
        if (done > step_s) step_s = done, crit = s, crit_end = end_s, crit_opt_start = sync_end, crit_opt = opt_s;
    }

    // --- breakdown on the critical stage, throughput, utilization ----------------------------------------------
    const StageWork& w = stages_[crit];
    const double busy = double(M) * (w.F + w.B) + w.slowdown + crit_opt;
    const double sync_wait = (crit_opt_start - crit_end) + (step_s - crit_opt_start - crit_opt);
    r.step_time_s = step_s;
    r.breakdown.compute_s = double(M) * (w.F + w.B - w.Fe - w.Be) + w.slowdown;
    r.breakdown.exposed_comm_s = double(M) * (w.Fe + w.Be) + sync_wait;
    r.breakdown.optimizer_s = crit_opt;
    r.breakdown.bubble_s = std::max(0.0, step_s - busy - sync_wait);
    const double tokens = double(p.global_batch) * m_.seq_len;
    r.tokens_per_s = tokens / step_s;
    const int moe_total = moe_prefix_[m_.layers];
    const double per_mb_device = (m_.layers - moe_total) * (lf.flops + lb.flops) + moe_total * le.moe_flops_mean +
                                 ef.flops + eb.flops + hf.flops + hb.flops;
    const double denom = double(sys_.chips) * chip.peak_bf16_flops_per_s * step_s;
    r.mfu = tokens * flops_per_token_ / denom;
    r.hfu = per_mb_device * double(M) * p.dp * p.tp * p.cp / denom;
    return r;
}

}  // namespace podsim
