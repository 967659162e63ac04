// Calibration against the workload: lowers a plan's op list (one layer forward and backward, the logits and the
// embedding, the optimizer) to real kernel runs on this machine, and predicts a single-device step back from what
// was measured.
#pragma once
#include <string>
#include <vector>

#include "models/calibration/cpu_train_step.hpp"
#include "hardware/calibration/kernel_profile.hpp"
#include "hardware/json_reader.hpp"
#include "models/plan.hpp"
#include "models/transformer.hpp"

namespace podsim {

// What a calibration run spent against its budget.
struct CalibrationSummary {
    double budget_s = 0, elapsed_s = 0;  // elapsed: the rate probes and every kernel, setup included
    double memory_limit_bytes = 0;       // per kernel's operands
    double largest_kernel_bytes = 0;     // of the kernels run
    int measured = 0;
    Json skipped = Json::array();        // {op, pass, kind, smallest_shape, estimated_s, reason}
    std::string overrun_cause;           // empty within budget; else the kernel that ran furthest over its estimate
};

// Runs the kernels at the plan's per-device shard shapes within `budget_s` (a bound, not a target): each kernel's
// cost (setup, warm-up and repetitions) is estimated from rates measured by tiny first runs, and its token
// dimension shrunk and its repetitions cut (to one after a warm-up) to fit its share of the budget left; a kernel
// that does not fit even so is skipped and listed with the reason. Operands are capped at 2 GiB per kernel (wider
// shapes cut, said in the measurement's "note"). Returns the profile's "measurements" array and appends a readable
// table to `table`.
enum class CalibrationDevice { cpu, cuda };
Json calibrate_kernels(const ModelSpec& m, const ParallelPlan& p, double budget_s, std::string& table,
                       CalibrationDevice device = CalibrationDevice::cpu, CalibrationSummary* summary = nullptr);

// The workload of the C++ CPU training step (models/calibration/cpu_train_step) in podsim's terms, so that the
// simulator can predict it: the same layers and ops, `ranks` processes of data parallelism, gradients all-reduced
// in fp32 after the backward.
ModelSpec cpu_gpt_model(const calib::TinyGpt& t);
ParallelPlan cpu_gpt_plan(const calib::TinyGpt& t, int ranks);

// The gradient all-reduce of data parallelism over one measured link (two ranks, as on loopback): one ring
// all-reduce per gradient tensor, costed by the same alpha-beta model as every collective (sim/collectives).
double predict_allreduce_s(const std::vector<size_t>& tensor_bytes, int ranks, double bytes_per_s, double latency_s);

}  // namespace podsim
