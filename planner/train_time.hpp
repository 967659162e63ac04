// Wall time to train a token budget without failures: the training steps, and the evaluation passes stated on the
// way (one after every interval_steps optimizer steps). Cost, goodput and the validation against MLPerf's
// time-to-train all take their time from here.
#pragma once
#include "models/step.hpp"

namespace podsim {

struct TrainTime {
    double steps = 0;              // token budget / tokens per step
    double train_s = 0;            // the steps alone
    long long evaluations = 0;     // floor(steps / interval_steps); 0 without an evaluation
    double eval_pass_s = 0;        // one pass
    double eval_s = 0;             // evaluations x eval_pass_s
    double total_s = 0;            // train_s + eval_s
    double step_incl_eval_s = 0;   // step time + eval_pass_s / interval_steps: a step's share of the wall time
    double eval_share() const { return total_s > 0 ? eval_s / total_s : 0; }
};

// Zero when the step is not feasible; a budget of 0 gives zero times but the per-step figures.
TrainTime train_time(double token_budget, const StepResult& step);

}  // namespace podsim
