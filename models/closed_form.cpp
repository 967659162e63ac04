#include "models/closed_form.hpp"

#include <algorithm>

namespace podsim {

StageTiming ClosedFormScheduler::time(const StepCosts& c) {
    const int P = c.pp, v = c.vpp;
    const double M = double(c.micro_batches);
    work_.resize(P);
    double total_slowdown = 0;
    for (int s = 0; s < P; ++s) {
        StageWork& w = work_[s];
        w = StageWork{};
        for (int k = 0; k < v; ++k) {
            const ChunkCosts& ck = c.chunk(s, k);
            w.F += ck.fwd_s, w.B += ck.bwd_s;
            total_slowdown += ck.slowdown_s;
        }
        if (v == 1) w.last_b_extra = c.chunk(s, 0).slowdown_s;
    }
    const double t = P > 1 ? c.p2p_s : 0;
    const double pipe_s = formula_.pipeline_s(c.schedule, work_, c.micro_batches, v, t);
    const std::vector<double>& played_ends = formula_.stage_ends_s();  // non-empty: the schedule was played out

    // --- each stage's end, its gradient sync, optimizer and parameter gather --------------------------------
    // The last micro-batch's chunk-0 backward travels from the last stage to stage 0, so stage s ends that many
    // backward hops before stage 0. A chunk's last backward is slowed by its gradient buckets, and those backwards
    // chain through the stages in the flush: every slowdown upstream of stage s on that chain delays its end.
    StageTiming out;
    double ahead_s = 0;  // time stage s ends before stage 0
    double crit_end = 0, crit_opt_start = 0;
    chunk_end_.resize(v);
    for (int s = 0; s < P; ++s) {
        const StageCosts& st = c.stages[s];
        const double end_s = played_ends.empty() ? pipe_s - ahead_s + total_slowdown : played_ends[s];
        // The chunk-0 backward includes the slowdown of stage s, which stages above s do not see.
        ahead_s += c.chunk(s, 0).bwd_s + c.chunk(s, 0).slowdown_s + t;
        double sync_end = end_s;
        if ((c.dp_sync || c.dcn_sync) && !c.bucketed) {  // after the flush (Megatron's "local" DDP); HSDP too
            sync_end = end_s + st.flush_sync_s;
        } else if (c.bucketed) {
            // Chunk k's last backward is followed by the P backwards of each lower chunk (interleaved cooldown).
            // Its buckets go out piece by piece, first in first out on the data-parallel stream: piece i is ready
            // when the backward has done i + 1 of its n pieces, and starts when the stream is free.
            double after = 0, finish = 0;
            for (int k = 0; k < v; ++k) {
                chunk_end_[k] = end_s - after;
                after += P * (c.chunk(s, k).bwd_s + c.chunk(s, k).slowdown_s);
            }
            for (int k = v - 1; k >= 0; --k) {
                const ChunkCosts& ck = c.chunk(s, k);
                const int n = ck.pieces;
                const double piece_sync = ck.grad_sync_s / n, bp = (ck.bwd_s + ck.slowdown_s) / n;
                for (int i = 0; i < n; ++i)
                    finish = std::max(finish, chunk_end_[k] - (n - 1 - i) * bp) + piece_sync;
            }
            sync_end = std::max(end_s, finish);
        }
        const double done = sync_end + st.optimizer_s + st.param_gather_s;
        if (done > out.step_s)
            out.step_s = done, out.critical_stage = s, crit_end = end_s, crit_opt_start = sync_end;
    }

    // --- where the critical stage's time went -------------------------------------------------------------------
    const int s = out.critical_stage;
    double fe = 0, be = 0, slowdown = 0;
    for (int k = 0; k < v; ++k) {
        const ChunkCosts& ck = c.chunk(s, k);
        fe += ck.fwd_exposed_s, be += ck.bwd_exposed_s, slowdown += ck.slowdown_s;
    }
    out.compute_s = M * (work_[s].F + work_[s].B - fe - be) + slowdown;
    out.exposed_comm_s = M * (fe + be);
    out.optimizer_s = c.stages[s].optimizer_s;
    out.busy_s = M * (work_[s].F + work_[s].B) + slowdown + out.optimizer_s;
    out.last_backward_end_s = crit_end;
    out.optimizer_start_s = crit_opt_start;
    out.optimizer_end_s = crit_opt_start + out.optimizer_s;
    return out;
}

double forward_only_s(const StepCosts& c, long long micro_batches) {
    std::vector<StageWork> work(c.pp);
    for (int s = 0; s < c.pp; ++s)
        for (int k = 0; k < c.vpp; ++k) work[s].F += c.chunk(s, k).fwd_s;
    return forward_only_pipeline_s(work, micro_batches, c.vpp, c.pp > 1 ? c.p2p_s : 0);
}

}  // namespace podsim
