// Calibration against the workload: lowers a plan's op list (one layer forward and backward, the logits and the
// embedding, the optimizer) to real kernel runs on this machine, and predicts a single-device step back from what
// was measured.
#pragma once
#include <string>
#include <vector>

#include "hardware/calibration/cpu_train_step.hpp"
#include "hardware/calibration/kernel_profile.hpp"
#include "hardware/json_reader.hpp"
#include "models/plan.hpp"
#include "models/transformer.hpp"

namespace podsim {

// Runs the kernels at the plan's per-device shard shapes, tokens shrunk to fit `budget_s`; returns the profile's
// "measurements" array and appends a readable table to `table`.
enum class CalibrationDevice { cpu, cuda };
Json calibrate_kernels(const ModelSpec& m, const ParallelPlan& p, double budget_s, std::string& table,
                       CalibrationDevice device = CalibrationDevice::cpu);

// The workload of the C++ CPU training step (hardware/calibration/cpu_train_step) in podsim's terms, so that the
// simulator can predict it: the same layers and ops, `ranks` processes of data parallelism, gradients all-reduced
// in fp32 after the backward.
ModelSpec cpu_gpt_model(const calib::TinyGpt& t);
ParallelPlan cpu_gpt_plan(const calib::TinyGpt& t, int ranks);

// The gradient all-reduce of data parallelism over one measured link (two ranks, as on loopback): one ring
// all-reduce per gradient tensor, costed by the same alpha-beta model as every collective (sim/collectives).
double predict_allreduce_s(const std::vector<size_t>& tensor_bytes, int ranks, double bytes_per_s, double latency_s);

}  // namespace podsim
