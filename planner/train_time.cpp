#include "planner/train_time.hpp"

#include <cmath>

namespace podsim {

TrainTime train_time(double token_budget, const StepResult& step) {
    TrainTime t;
    if (!step.feasible || step.tokens_per_s <= 0) return t;
    // The time of the steps is the budget at the step's throughput, as before evaluations were modelled (a final
    // partial step counts its share).
    t.train_s = token_budget > 0 ? token_budget / step.tokens_per_s : 0;
    t.total_s = t.train_s;
    t.step_incl_eval_s = step.step_time_s;
    if (step.tokens_per_step > 0) t.steps = token_budget / step.tokens_per_step;
    if (!step.evaluation) return t;
    const EvalPass& e = *step.evaluation;
    // An evaluation follows every completed interval. The ratio of budget to tokens per step may land a hair under
    // the whole number it stands for, which must not lose the evaluation at its end.
    t.evaluations = static_cast<long long>(std::floor(t.steps / double(e.spec.interval_steps) * (1 + 1e-12)));
    t.eval_pass_s = e.pass_s;
    t.eval_s = double(t.evaluations) * e.pass_s;
    t.total_s += t.eval_s;
    t.step_incl_eval_s += e.pass_s / double(e.spec.interval_steps);
    return t;
}

}  // namespace podsim
