// Is a claimed training outcome physically plausible? Compares a claim (parameters, days, utilization, tokens,
// cost) with the simulation of the closest plan podsim has for it (the claim's scenario).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "models/scenario.hpp"
#include "models/step.hpp"

namespace podsim {

// The largest relative error podsim shows on published runs (README, Accuracy): a claim beyond the simulation by
// more than this is not explained by the model's own uncertainty.
inline constexpr double kModelTolerance = 0.20;

struct Claim {
    std::string file, name, source;
    std::string scenario_file;
    std::optional<double> params, training_days, hardware_utilization, tokens, cost_usd;
};
Claim load_claim(const std::string& file);

struct ClaimVerdict {
    bool plausible = true;
    std::vector<std::string> findings;  // one sentence each, with the numbers
    double simulated_hfu = 0, simulated_mfu = 0;
    double implied_tokens_at_claim = 0;      // what the claimed days and utilization would train
    double tokens_in_claimed_days = 0;       // what the simulated plan trains in the claimed days
    double implied_mfu = 0;                  // when the claim gives tokens and days
    std::vector<std::string> notes;          // explanations that are not findings (duty cycle vs FLOPs)
};

// `r`: the plan judged for throughput (tokens, MFU); `busiest`: the plan with the highest hardware FLOPs
// utilization podsim has for the claim (recomputation counts as hardware work), for a claimed utilization. The
// most favourable plan for each figure, so that "not plausible" never hinges on a poor split.
ClaimVerdict check_claim(const Claim& c, const Scenario& s, const StepResult& r, const StepResult& busiest);
inline ClaimVerdict check_claim(const Claim& c, const Scenario& s, const StepResult& r) { return check_claim(c, s, r, r); }

}  // namespace podsim
