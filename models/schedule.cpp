#include "models/schedule.hpp"

#include <algorithm>
#include <utility>

namespace podsim {

// --- program order (the engine's face) ----------------------------------------------------------------------

std::vector<StagePass> program_order(Schedule schedule, int P, int v, int s, int m) {
    std::vector<StagePass> out;
    out.reserve(size_t(2) * v * m);
    if (schedule == Schedule::gpipe) {
        // Every forward (chunk by chunk), then every backward in reverse.
        for (int c = 0; c < v; ++c)
            for (int i = 0; i < m; ++i) out.push_back({true, c, i});
        for (int c = v - 1; c >= 0; --c)
            for (int i = 0; i < m; ++i) out.push_back({false, c, i});
        return out;
    }
    if (schedule == Schedule::one_f_one_b) {
        // P - s - 1 warm-up forwards, forward/backward pairs, the remaining backwards (Narayanan et al. 2021).
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
    auto f_at = [&](int k) { return StagePass{true, (k / P) % v, (k / (P * v)) * P + k % P}; };
    auto b_at = [&](int k) { return StagePass{false, v - 1 - (k / P) % v, (k / (P * v)) * P + k % P}; };
    for (int k = 0; k < warm; ++k) out.push_back(f_at(k));
    for (int k = 0; k < M - warm; ++k) {
        out.push_back(f_at(warm + k));
        out.push_back(b_at(k));
    }
    for (int k = M - warm; k < M; ++k) out.push_back(b_at(k));
    return out;
}

// --- closed form (the planner's face) -----------------------------------------------------------------------

double PipelineFormula::one_f_one_b_small(const std::vector<StageWork>& stages, long long M, double t) {
    const int P = static_cast<int>(stages.size());
    const int m = static_cast<int>(M);
    // Pass j of stage s in 1F1B order (as program_order): warm-up forwards, forward/backward pairs, the backwards.
    auto pass = [&](int s, int j) -> std::pair<bool, int> {
        const int warm = std::min(P - s - 1, m), pairs_end = warm + 2 * (m - warm);
        if (j < warm) return {true, j};
        if (j < pairs_end) return (j - warm) % 2 == 0 ? std::pair{true, warm + (j - warm) / 2}
                                                      : std::pair{false, (j - warm) / 2};
        return {false, m - warm + (j - pairs_end)};
    };
    f_end_.assign(size_t(P) * m, -1), b_end_.assign(size_t(P) * m, -1), free_at_.assign(P, 0), next_.assign(P, 0);
    stage_end_.assign(P, 0);
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
                const double done = std::max(free_at_[s], ready) +
                                    (fwd ? stages[s].F : stages[s].B + (i == m - 1 ? stages[s].last_b_extra : 0));
                (fwd ? f_end_ : b_end_)[size_t(s) * m + i] = done;
                free_at_[s] = done, end = std::max(end, done), stage_end_[s] = std::max(stage_end_[s], done);
                ++next_[s], --left, progressed = true;
            }
        }
        if (!progressed) break;  // cannot happen for 1F1B orders; guards against an endless loop
    }
    return end;
}

double PipelineFormula::pipeline_s(Schedule schedule, const std::vector<StageWork>& stages, long long M, int v,
                                   double t) {
    // A pipeline of identical micro-batches is a flow shop: the step is set by the stage k whose M micro-batches
    // run back to back, plus the first micro-batch reaching it and the last one leaving the rest of the pipeline.
    // 1F1B: in steady state a stage also waits one send per forward-backward pair (its backward needs the next
    // stage's backward, which needed this stage's forward: period F + B + t). Interleaved: the other stages' share
    // shrinks by v and the extra warm-up micro-batches hide the sends (Narayanan et al. 2021, sec. 2.2).
    // GPipe: the same for all forwards, then all backwards.
    const int P = static_cast<int>(stages.size());
    stage_end_.clear();
    double sum_f = 0, sum_b = 0;
    for (const StageWork& w : stages) sum_f += w.F, sum_b += w.B;
    const double sum_fb = sum_f + sum_b;
    if (P == 1) return double(M) * sum_fb;
    double pipe_s = 0;
    if (schedule == Schedule::gpipe) {
        double fwd = 0, bwd = 0;
        for (int k = 0; k < P; ++k) {
            fwd = std::max(fwd, (double(M) * v - 1) * stages[k].F / v + sum_f / v);
            bwd = std::max(bwd, (double(M) * v - 1) * stages[k].B / v + sum_b / v);
        }
        return fwd + bwd + 2 * (P - 1) * t;
    }
    if (v == 1 && M < P) {
        // Fewer micro-batches than stages: no stage reaches a steady state, so the flow-shop bound below (which
        // hides each round trip under P-1-k warm-up forwards) does not hold. The schedule is short (2 M P
        // passes): play it out, each stage taking its passes in 1F1B order, each pass starting when its stage is
        // free and its input has arrived (one hand-off t later).
        return one_f_one_b_small(stages, M, t);
    }
    if (v == 1 && double(M) * P <= kPlayOutPasses) {
        // A block of clearly heavier stages (remainder layers: 152 layers on 72 stages are 3 on 8 stages, 2 on the
        // rest) drains as a block, which the bound below follows only to a few percent (2.3% at 72 stages, M = 72);
        // a lone heavy stage (the head's) it follows closely. Where there is such a block and the schedule is short
        // enough, play it out instead (exact; tens of microseconds, so only then: the search screens ~1M plans/s).
        double lo = stages[0].F + stages[0].B;
        for (const StageWork& w : stages) lo = std::min(lo, w.F + w.B);
        int heavy = 0;
        for (const StageWork& w : stages) heavy += w.F + w.B > 1.1 * lo;
        if (heavy >= 2) return one_f_one_b_small(stages, M, t);
    }
    if (v == 1) {
        // Stage k is the bottleneck: the first forward reaches it after the stages before it (A); it runs its
        // P-k warm-up forwards and then waits (W) for the first backward, which needs the forward and backward of
        // every later stage; then it is never starved (M F+B back to back), and after its last forward the last
        // micro-batch still has to go round the later stages (R) and back to stage 0 (D). Exact for identical
        // stages without hand-off time ((M + P - 1)(F + B)); for unequal stages (remainder layers, embedding and
        // head) it follows the heaviest stage instead of charging every stage's full share to the fill.
        //
        // Hand-offs: in steady state stage k's backward of micro-batch i waits for stage k+1's forward of a later
        // micro-batch, its backward of i and two hand-offs, so n neighbouring stages that are all busy form a cycle
        // of period (their F + B summed + 2 (n - 1) t) / n per micro-batch: P identical stages run at
        // F + B + 2 t (P - 1) / P, a lone heaviest stage whose neighbours have 2t of slack at F + B. The period is
        // the slowest such window (windows up to 32 stages: a longer one changes it by under t / 16).
        double max_fb = 0;
        for (const StageWork& w : stages) max_fb = std::max(max_fb, w.F + w.B);
        double period = max_fb;
        if (t > 0)
            for (int a = 0; a < P; ++a) {
                if (stages[a].F + stages[a].B + 2 * t <= period) continue;  // cannot start a slower window
                double sum = 0;
                for (int b = a; b < std::min(P, a + 32); ++b) {
                    sum += stages[b].F + stages[b].B;
                    period = std::max(period, (sum + 2 * (b - a) * t) / (b - a + 1));
                }
            }
        double before_f = 0, before_b = 0;  // sums over stages < k
        const double M_d = double(M);
        for (int k = 0; k < P; ++k) {
            const StageWork& w = stages[k];
            const double after_f = sum_f - before_f - w.F, after_b = sum_b - before_b - w.B;  // stages > k
            const double wait = std::max(0.0, after_f + after_b - (P - 1 - k) * w.F);
            const double busy = M_d * (w.F + w.B);
            const double tail = std::max(0.0, after_f + after_b - (P - 1 - k) * w.B);
            pipe_s = std::max(pipe_s, before_f + wait + busy + tail + before_b);
            before_f += w.F, before_b += w.B;
        }
        return pipe_s + double(M - 1) * (period - max_fb) + 2 * (P - 1) * t;
    }
    for (int k = 0; k < P; ++k) {
        const double fb = stages[k].F + stages[k].B;
        pipe_s = std::max(pipe_s, double(M) * fb + (sum_fb - fb) / v);
    }
    // The first micro-batch's forward and the last one's backward pass every model chunk: P v - 1 hand-offs.
    return pipe_s + 2 * (P * v - 1) * t;
}

// --- forward-only pipeline (evaluation) -------------------------------------------------------------------------

double forward_only_pipeline_s(const std::vector<StageWork>& stages, long long M, int v, double t) {
    const int P = static_cast<int>(stages.size());
    if (M <= 0 || P == 0) return 0;
    if (P == 1) return double(M) * stages[0].F;
    double sum_f = 0;
    for (const StageWork& w : stages) sum_f += w.F;
    // Stage k is the bottleneck: the first micro-batch reaches it through the chunks before it and the last one leaves
    // through the chunks after it (a 1/v share of the other stages' forwards, P - 1 hand-offs in all); in between it
    // runs its M forwards of every chunk, each followed by its hand-off. No backward waits on anything, so nothing
    // else idles it.
    double pipe_s = 0;
    for (int k = 0; k < P; ++k)
        pipe_s = std::max(pipe_s, double(M) * (stages[k].F + v * t) + (sum_f - stages[k].F) / v + (P - 1) * t);
    return pipe_s;
}

}  // namespace podsim
