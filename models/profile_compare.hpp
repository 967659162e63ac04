// A measured profile against podsim's simulation of the same step (issue #15): reads a Chrome trace-event file
// (PyTorch profiler / Kineto, the JAX profiler's trace viewer export, or podsim's own `profile record`), attributes
// its time to podsim's op names and to categories, and compares per op and per category with the simulated step.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "hardware/json_reader.hpp"
#include "models/plan.hpp"
#include "models/step.hpp"
#include "models/transformer.hpp"

namespace podsim {

struct MeasuredEvent {
    std::string name;
    std::string category;  // compute: "matmul", "attention", "elementwise"; "communication", "optimizer", "memory", "other"
    double dur_s = 0;
    bool named = false;    // the name is one of podsim's ops
};

struct MeasuredTrace {
    std::vector<MeasuredEvent> events;  // leaf device work only (annotations and host-side wrappers left out)
    int steps = 1;                      // ProfilerStep#N annotations, else otherData.steps, else 1
    std::string format;                 // "kineto (device kernels)", "chrome trace events"
};

// Throws InputError(file, path, why) on a malformed trace.
MeasuredTrace read_chrome_trace(const Json& j, const std::string& file);

struct OpComparison {
    std::string op;           // podsim's layer op name ("qkv", "mlp.down.wgrad")
    double measured_s = 0;    // per layer and micro-batch (the trace's total over steps x micro-batches x layers)
    double simulated_s = 0;   // podsim's time of the op (one layer, one micro-batch)
    size_t events = 0;
    double error_pct() const { return measured_s > 0 ? 100 * (simulated_s - measured_s) / measured_s : 0; }
};

struct ProfileComparison {
    std::vector<OpComparison> ops;  // every layer op podsim prices, measured or not (events = 0)
    std::map<std::string, double> measured_per_step_s;  // by category
    double measured_step_s = 0;     // all device work per step
    double named_per_step_s = 0;    // of which in events named as podsim ops
    double simulated_step_s = 0, simulated_compute_s = 0, simulated_optimizer_s = 0, simulated_exposed_comm_s = 0;
    int steps = 1;
    std::vector<std::pair<std::string, double>> largest_unnamed;  // per step, up to 8
    double attributed() const { return measured_step_s > 0 ? named_per_step_s / measured_step_s : 0; }
};

ProfileComparison compare_profile(const MeasuredTrace& t, const StepResult& sim, const ModelSpec& m,
                                  const ParallelPlan& p);

}  // namespace podsim
