#include "models/evaluation.hpp"

#include <cmath>

#include "hardware/limits.hpp"
#include "models/closed_form.hpp"

namespace podsim {

std::optional<EvaluationSpec> evaluation_from_json(const JsonObject& training) {
    const auto o = training.opt_object("evaluation");
    if (!o) return std::nullopt;
    o->only_keys({"tokens", "interval_steps", "global_batch_seqs"});
    EvaluationSpec e;
    e.tokens = o->number_in("tokens", 1, limits::max_tokens);
    // A step trains at least one token, so no budget within max_tokens has more steps than that.
    e.interval_steps = o->int_in("interval_steps", 1, static_cast<long long>(limits::max_tokens));
    e.global_batch_seqs = o->int_in("global_batch_seqs", 1, limits::max_global_batch_seqs, 0);
    return e;
}

EvalPass price_eval_pass(const StepCosts& c, const EvaluationSpec& spec, const ParallelPlan& p, long long seq_len) {
    EvalPass e;
    e.spec = spec;
    if (e.spec.global_batch_seqs <= 0) e.spec.global_batch_seqs = p.global_batch;
    const long long batch = e.spec.global_batch_seqs;
    const long long per_mb = static_cast<long long>(p.dp) * p.micro_batch;  // sequences per micro-batch, all replicas
    auto micro_batches = [&](long long seqs) { return (seqs + per_mb - 1) / per_mb; };
    // tokens <= 1e18 and seq_len >= 1: the sequence count fits; batches are counted, not looped over.
    e.sequences = static_cast<long long>(std::ceil(spec.tokens / double(seq_len)));
    e.full_batches = e.sequences / batch;
    e.last_batch_seqs = e.sequences % batch;
    e.micro_batches = micro_batches(batch);
    e.batch_s = forward_only_s(c, e.micro_batches);
    e.pass_s = double(e.full_batches) * e.batch_s;
    if (e.last_batch_seqs > 0) e.pass_s += forward_only_s(c, micro_batches(e.last_batch_seqs));
    return e;
}

}  // namespace podsim
