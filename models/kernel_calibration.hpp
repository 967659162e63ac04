// Calibration against the workload: lowers a plan's op list (one layer forward and backward, the logits and the
// embedding, the optimizer) to real kernel runs on this machine, and predicts a single-device step back from what
// was measured.
#pragma once
#include <string>
#include <vector>

#include "hardware/calibration/kernel_profile.hpp"
#include "hardware/json_reader.hpp"
#include "models/plan.hpp"
#include "models/transformer.hpp"

namespace podsim {

// Runs the kernels at the plan's per-device shard shapes, tokens shrunk to fit `budget_s`; returns the profile's
// "measurements" array and appends a readable table to `table`.
Json calibrate_kernels(const ModelSpec& m, const ParallelPlan& p, double budget_s, std::string& table);

// One training step of a single device (no parallelism: nothing to communicate, no pipeline) from a profile:
// every op of the step's op list timed from its measured kernel, scaled to the op's size. Throws InputError
// when the profile lacks an op of the plan.
struct KernelPrediction {
    double step_s = 0;
    double forward_s = 0, backward_s = 0, optimizer_s = 0;  // whole step
};
KernelPrediction predict_step_from_kernels(const ModelSpec& m, const ParallelPlan& p, const calib::KernelProfile& k);

// The gradient all-reduce of data parallelism over one measured link (two ranks, as on loopback): one ring
// all-reduce per gradient tensor, costed by the same alpha-beta model as every collective (sim/collectives).
double predict_allreduce_s(const std::vector<size_t>& tensor_bytes, int ranks, double bytes_per_s, double latency_s);

}  // namespace podsim
