#include "planner/claim_check.hpp"

#include "hardware/limits.hpp"

#include <cmath>
#include <filesystem>
#include <fmt/format.h>

namespace podsim {

Claim load_claim(const std::string& file) {
    Json j = load_json_file(file);
    JsonObject o(j, file, "$");
    o.only_keys({"schema_version", "name", "source", "scenario", "claim", "notes"});
    if (o.integer("schema_version") != 1) o.fail("schema_version", "expected 1");
    Claim c;
    c.file = file;
    c.name = o.string("name");
    c.source = o.opt_string("source").value_or("");
    c.scenario_file = (std::filesystem::path(file).parent_path() / o.string("scenario")).string();
    auto cl = o.object("claim");
    cl.only_keys({"params", "training_days", "hardware_utilization", "tokens", "cost_usd"});
    // Ranges (hardware/limits.hpp): a claim outside them is not a training run (a utilization under 1% or a
    // budget under one token would make every verdict meaningless).
    auto ranged = [&](const char* key, double lo, double hi) -> std::optional<double> {
        if (!cl.has(key)) return std::nullopt;
        return cl.number_in(key, lo, hi);
    };
    c.params = ranged("params", 1, limits::max_params);
    c.training_days = ranged("training_days", 1.0 / 24 / 60, limits::max_days);  // a minute .. 100 years
    c.hardware_utilization = ranged("hardware_utilization", 0.01, 1);
    c.tokens = ranged("tokens", 1, limits::max_tokens);
    c.cost_usd = ranged("cost_usd", 0.01, 1e13);
    return c;
}

ClaimVerdict check_claim(const Claim& c, const Scenario& s, const StepResult& r, const StepResult& busiest) {
    ClaimVerdict v;
    auto find = [&](bool ok, std::string text) {
        v.findings.push_back(std::move(text));
        v.plausible = v.plausible && ok;
    };
    if (!r.feasible) {
        find(false, "the closest plan podsim has for it is infeasible");
        return v;
    }
    const StepResult& h = busiest.feasible ? busiest : r;
    v.simulated_hfu = h.hfu, v.simulated_mfu = r.mfu;
    const double flops_per_token = r.model_flops_per_step / r.tokens_per_step;  // model FLOPs (MFU convention)
    const double peak = double(s.system.chips) * r.peak_flops_per_s;
    if (c.params) {
        const double ours = s.model.total_params();
        find(std::fabs(ours / *c.params - 1) < 0.1,
             fmt::format("parameters: claimed {:.3g}, the scenario's model has {:.3g}", *c.params, ours));
    }
    if (c.hardware_utilization) {
        const double claimed = *c.hardware_utilization;
        find(claimed <= h.hfu * (1 + kModelTolerance),
             fmt::format("utilization: claimed {:.0f}% of peak; the highest hardware FLOPs utilization of any plan podsim "
                         "finds is {:.1f}% ({:.1f}% model FLOPs), so the claim is {:.2f}x what the hardware does with this model "
                         "(podsim's worst error on published runs is {:.0f}%)",
                         100 * claimed, 100 * h.hfu, 100 * h.mfu, claimed / h.hfu, 100 * kModelTolerance));
        v.notes.push_back("\"utilization\" in such claims is often duty cycle (the share of time the accelerators are "
                          "busy, as Cloud Monitoring's TPU duty cycle or nvidia-smi's GPU utilization report it), which "
                          "is near 100% for any busy job; podsim judges FLOPs utilization (FLOPs done over peak FLOPs)");
    }
    if (c.training_days) {
        const double seconds = *c.training_days * 86400;
        v.tokens_in_claimed_days = r.tokens_per_s * seconds;
        if (c.hardware_utilization)  // claimed utilization read as hardware FLOPs; scale by the plan's MFU/HFU
            v.implied_tokens_at_claim = seconds * peak * *c.hardware_utilization * (r.mfu / r.hfu) / flops_per_token;
        const double per_param = v.tokens_in_claimed_days / s.model.total_params();
        // "Trains the model in D days" means training it on its tokens: the claim's, else the scenario's budget.
        const double needed = c.tokens ? *c.tokens : s.token_budget;
        if (needed > 0 && !c.tokens)
            find(v.tokens_in_claimed_days >= needed / (1 + kModelTolerance),
                 fmt::format("in {:g} days the fastest simulated plan trains {:.3g} tokens ({:.3f} tokens per parameter); "
                             "the scenario's budget is {:.3g} tokens ({:.2f} per parameter; compute-optimal training, "
                             "Hoffmann et al. 2022, uses about 20)",
                             *c.training_days, v.tokens_in_claimed_days, per_param, needed,
                             needed / s.model.total_params()));
        else
            find(true, fmt::format("in {:g} days the simulated plan trains {:.3g} tokens ({:.3f} tokens per parameter; "
                                   "compute-optimal training, Hoffmann et al. 2022, uses about 20)",
                                   *c.training_days, v.tokens_in_claimed_days, per_param));
        if (c.tokens) {
            v.implied_mfu = *c.tokens * flops_per_token / (seconds * peak);
            find(v.implied_mfu <= r.mfu * (1 + kModelTolerance),
                 fmt::format("{:.3g} tokens in {:g} days needs {:.1f}% MFU; the simulated plan reaches {:.1f}%",
                             *c.tokens, *c.training_days, 100 * v.implied_mfu, 100 * r.mfu));
        }
    }
    return v;
}

}  // namespace podsim
