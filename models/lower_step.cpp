#include "models/lower_step.hpp"

#include <algorithm>

#include "models/schedule.hpp"

namespace podsim {

namespace {

// The engine's time categories (TaskGraph::category_names, in this order).
enum Category { kCompute = 0, kExposedComm = 1, kOptimizer = 2, kSideComm = 3 };
constexpr int kStreamsPerStage = 4;  // compute, send_fwd, send_bwd, dp: added in this order per stage

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

LoweredStep lower_step(const StepCosts& c) {
    LoweredStep low;
    TaskGraph& g = low.graph;
    g.category_names = {"compute", "exposed collectives", "optimizer", "side-stream communication"};
    const int P = c.pp, v = c.vpp, nchunks = P * v;
    const int M = static_cast<int>(c.micro_batches);
    low.micro_batches = M;
    low.chunks_per_stage = c.vpp;
    std::vector<uint32_t> s_fsend(P), s_bsend(P), s_dp(P);
    low.compute_stream.resize(P);
    for (int s = 0; s < P; ++s) {
        low.compute_stream[s] = g.add_stream("stage" + std::to_string(s) + ".compute");
        s_fsend[s] = g.add_stream("stage" + std::to_string(s) + ".send_fwd");
        s_bsend[s] = g.add_stream("stage" + std::to_string(s) + ".send_bwd");
        s_dp[s] = g.add_stream("stage" + std::to_string(s) + ".dp");
    }
    const std::vector<uint32_t>& s_comp = low.compute_stream;
    // Cost classes per (stage, chunk): its forward, its backward, and for its last backward the bucket pieces.
    std::vector<uint32_t> cF(nchunks), cB(nchunks), cBpiece(nchunks), cDPpiece(nchunks);
    for (int s = 0; s < P; ++s) {
        for (int k = 0; k < v; ++k) {
            const ChunkCosts& ck = c.chunk(s, k);
            const int idx = s * v + k;
            // (Appended, not concatenated: GCC 12 warns -Wrestrict on a temporary string's operator+ here.)
            std::string where = " s";
            where += std::to_string(s);
            where += " c";
            where += std::to_string(k);
            cF[idx] = g.add_cost_class(make_class('F' + where, ck.fwd_s, ck.fwd_exposed_s));
            cB[idx] = g.add_cost_class(make_class('B' + where, ck.bwd_s, ck.bwd_exposed_s));
            cBpiece[idx] = g.add_cost_class(
                make_class("B piece", ck.bwd_s / ck.pieces + ck.slowdown_s / ck.pieces, ck.bwd_exposed_s / ck.pieces));
            cDPpiece[idx] = g.add_cost_class(make_class("grad sync", ck.grad_sync_s / ck.pieces, 0, kSideComm));
        }
    }
    const uint32_t cP2P = g.add_cost_class(make_class("p2p", c.p2p_s, 0, kSideComm));
    auto model_chunk = [&](int s, int k) { return k * P + s; };

    // Compute tasks in each stage's program order. P v M <= --max-tasks / 4 < 2^29 (check_split): ints suffice.
    const size_t n = size_t(P) * v * M;
    std::vector<uint32_t> Fin(n), Bin(n), Bout(n);
    auto key = [&](int s, int k, int i) { return (s * v + k) * M + i; };
    std::vector<std::vector<uint32_t>> dp_tasks(P);
    low.last_compute.resize(P);
    g.reserve(n * 4 + 64, n * 4 + 64);
    std::vector<std::vector<StagePass>> orders(P);
    for (int s = 0; s < P; ++s) {
        orders[s] = program_order(c.schedule, P, v, s, M);
        const auto& order = orders[s];
        std::vector<int> last_b(v, -1);
        for (size_t k = 0; k < order.size(); ++k)
            if (!order[k].fwd) last_b[order[k].chunk] = static_cast<int>(k);
        for (size_t k = 0; k < order.size(); ++k) {
            const StagePass& o = order[k];
            const int idx = s * v + o.chunk;
            const int kk = key(s, o.chunk, o.mb);
            if (o.fwd) {
                Fin[kk] = g.add_task(s_comp[s], cF[idx], kk);
            } else if (static_cast<int>(k) == last_b[o.chunk] && (c.bucketed || !c.dp_sync)) {
                // The chunk's last backward, in pieces: each piece's gradient bucket is reduced on the dp stream
                // while the next piece computes.
                const ChunkCosts& ck = c.chunk(s, o.chunk);
                uint32_t first = 0, t = 0;
                for (int piece = 0; piece < ck.pieces; ++piece) {
                    t = g.add_task(s_comp[s], cBpiece[idx], kk);
                    if (piece == 0) first = t;
                    if (c.bucketed) {
                        const uint32_t d = g.add_task(s_dp[s], cDPpiece[idx], kk);
                        g.add_dependency(t, d);
                        dp_tasks[s].push_back(d);
                    }
                }
                Bin[kk] = first, Bout[kk] = t;
            } else {
                Bin[kk] = Bout[kk] = g.add_task(s_comp[s], cB[idx], kk);
            }
        }
        low.last_compute[s] = static_cast<uint32_t>(g.task_count() - 1);
        while (g.tasks()[low.last_compute[s]].stream != s_comp[s]) --low.last_compute[s];
    }
    // Pipeline edges through send tasks.
    for (int s = 0; s < P; ++s) {
        for (const StagePass& o : orders[s]) {
            const int mc = model_chunk(s, o.chunk);
            if (o.fwd && mc + 1 < nchunks) {
                const int ns = (s + 1) % P, nc = s + 1 < P ? o.chunk : o.chunk + 1;
                const uint32_t send = g.add_task(s_fsend[s], cP2P, key(s, o.chunk, o.mb));
                g.add_dependency(Fin[key(s, o.chunk, o.mb)], send);
                g.add_dependency(send, Fin[key(ns, nc, o.mb)]);
            }
            if (!o.fwd && mc > 0) {
                const int ps = (s + P - 1) % P, pc = s > 0 ? o.chunk : o.chunk - 1;
                const uint32_t send = g.add_task(s_bsend[s], cP2P, key(s, o.chunk, o.mb));
                g.add_dependency(Bout[key(s, o.chunk, o.mb)], send);
                g.add_dependency(send, Bin[key(ps, pc, o.mb)]);
            }
            if (o.fwd && mc == nchunks - 1) g.add_dependency(Fin[key(s, o.chunk, o.mb)], Bin[key(s, o.chunk, o.mb)]);
        }
    }
    // Gradient sync (un-bucketed: one transfer after the pipeline flush), optimizer, and the parameter all-gather
    // of a distributed optimizer.
    low.optimizer_task.resize(P), low.tail_task.resize(P);
    for (int s = 0; s < P; ++s) {
        const StageCosts& st = c.stages[s];
        if ((c.dp_sync || c.dcn_sync) && !c.bucketed) {
            const uint32_t cls = g.add_cost_class(make_class("grad sync", st.flush_sync_s, 0, kSideComm));
            const uint32_t d = g.add_task(s_dp[s], cls);
            g.add_dependency(low.last_compute[s], d);
            dp_tasks[s].push_back(d);
        }
        const uint32_t co = g.add_cost_class(make_class("optimizer", st.optimizer_s, 0, kOptimizer));
        const uint32_t opt = g.add_task(s_comp[s], co);
        for (uint32_t d : dp_tasks[s]) g.add_dependency(d, opt);
        low.optimizer_task[s] = low.tail_task[s] = opt;
        if (st.param_gather_s > 0) {
            const uint32_t ca = g.add_cost_class(make_class("param all-gather", st.param_gather_s, 0, kSideComm));
            low.tail_task[s] = g.add_task(s_dp[s], ca);
            g.add_dependency(opt, low.tail_task[s]);
        }
    }
    return low;
}

StageTiming engine_timing(const LoweredStep& low, const SimResult& sim) {
    StageTiming t;
    t.step_s = sim.makespan_s;
    double latest = -1;
    for (size_t s = 0; s < low.tail_task.size(); ++s)
        if (sim.finish_s[low.tail_task[s]] > latest) latest = sim.finish_s[low.tail_task[s]], t.critical_stage = int(s);
    const int crit = t.critical_stage;
    const StreamStats& cs = sim.streams[low.compute_stream[crit]];
    t.compute_s = cs.by_category_s[kCompute];
    t.exposed_comm_s = cs.by_category_s[kExposedComm];
    t.optimizer_s = cs.by_category_s[kOptimizer];
    t.busy_s = cs.busy_s;
    t.last_backward_end_s = sim.finish_s[low.last_compute[crit]];
    t.optimizer_start_s = sim.start_s[low.optimizer_task[crit]];
    t.optimizer_end_s = sim.finish_s[low.optimizer_task[crit]];
    return t;
}

std::vector<TimelineSpan> timeline_of(const LoweredStep& low, const SimResult& sim) {
    const TaskGraph& g = low.graph;
    const int M = low.micro_batches;
    std::vector<TimelineSpan> out;
    out.reserve(sim.timeline.size());
    for (const Span& sp : sim.timeline) {
        const Task& t = g.tasks()[sp.task];
        const CostClass& c = g.cost_classes()[t.cost_class];
        const std::string& sn = g.stream_names[t.stream];
        TimelineSpan ts;
        ts.stage = static_cast<int>(t.stream / kStreamsPerStage);
        ts.stream = sn.substr(sn.find('.') + 1);
        ts.label = c.label;
        const bool pass_task = ts.stream == "compute" && (c.label[0] == 'F' || c.label[0] == 'B');
        const bool send_task = ts.stream == "send_fwd" || ts.stream == "send_bwd";
        if (pass_task && M > 0) ts.label += " mb" + std::to_string(t.tag % M);
        if ((pass_task || send_task) && M > 0) {
            // The tag is the pass's key: (stage x chunks + chunk) x M + micro-batch (lower_step).
            ts.pass = pass_task ? c.label[0] : ts.stream == "send_fwd" ? 'F' : 'B';
            ts.chunk = static_cast<int>((t.tag / M) % low.chunks_per_stage);
            ts.micro_batch = static_cast<int>(t.tag % M);
        }
        ts.start_s = sp.start_s, ts.finish_s = sp.finish_s;
        ts.compute_s = c.parts_s[kCompute], ts.exposed_comm_s = c.parts_s[kExposedComm];
        ts.optimizer_s = c.parts_s[kOptimizer], ts.side_comm_s = c.parts_s[kSideComm];
        out.push_back(std::move(ts));
    }
    return out;
}

}  // namespace podsim
