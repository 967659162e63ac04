// Evaluation passes during training: what a scenario states (`training.evaluation`) and what one pass costs on the
// plan. An evaluation is the model run forward only over its own data, on the same devices and plan as training.
#pragma once
#include <optional>

#include "hardware/json_reader.hpp"
#include "models/plan.hpp"
#include "models/step_costs.hpp"

namespace podsim {

struct EvaluationSpec {
    double tokens = 0;                // per evaluation pass
    long long interval_steps = 0;     // one evaluation every this many optimizer steps
    long long global_batch_seqs = 0;  // sequences per evaluation batch; 0: the training global batch
};

// `training.evaluation`: {"tokens", "interval_steps", optional "global_batch_seqs"}; absent or null: nullopt.
std::optional<EvaluationSpec> evaluation_from_json(const JsonObject& training);

// One evaluation pass on a priced plan: ceil(tokens / seq_len) sequences in batches of the evaluation batch, each
// batch one forward-only pipeline (closed_form.hpp forward_only_s) over ceil(batch / (dp x micro_batch))
// micro-batches per replica (a batch that does not divide is padded to whole micro-batches, as a last partial
// batch is). Activations are dropped after each forward and nothing is recomputed, so it needs no memory beyond
// training's; the loss all-reduce at its end (a few bytes) is not charged.
struct EvalPass {
    EvaluationSpec spec;              // as stated, with global_batch_seqs resolved
    long long sequences = 0;
    long long full_batches = 0;       // batches of spec.global_batch_seqs
    long long last_batch_seqs = 0;    // a final partial batch (0: none)
    long long micro_batches = 0;      // per replica in a full batch
    double batch_s = 0;               // one full batch
    double pass_s = 0;                // the whole pass
};
EvalPass price_eval_pass(const StepCosts& costs, const EvaluationSpec& spec, const ParallelPlan& plan,
                         long long seq_len);

}  // namespace podsim
