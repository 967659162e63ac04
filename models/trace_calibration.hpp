// A kernel profile from a measured trace (`podsim calibrate --from-trace`, issue #15): what each of podsim's ops
// took in a profiler trace of the scenario's step, written in the same format `podsim calibrate` writes, so that
// `--kernel-profile` times the ops from the measurement.
//
// Two ways a trace can speak:
//  - events named as podsim's ops (the project's own `profile record`, or a user's annotated regions): each op gets
//    a measurement, its time per occurrence = the events' total over steps x micro-batches x layers on the device;
//  - device kernels with vendor names (a Kineto trace of cuBLAS / flash / elementwise kernels): no op can be named,
//    so the profile carries rates per kind instead: the step's GEMM FLOPs over the measured GEMM time, attention
//    FLOPs over attention time, elementwise bytes over elementwise time. They time every op of that kind.
#pragma once
#include <string>
#include <vector>

#include "hardware/json_reader.hpp"
#include "models/plan.hpp"
#include "models/profile_compare.hpp"
#include "models/transformer.hpp"

namespace podsim {

struct TraceProfile {
    Json measurements = Json::array();  // per op, the `podsim calibrate` measurement format (+ mean_s, events)
    Json kind_rates = Json::object();   // per kind where the trace's ops were not named: the rate and how derived
    double measured_step_s = 0;         // device work a step in the trace
    double used_step_s = 0;             // of which in the measurements and rates above
    std::vector<std::string> unmatched; // op names podsim prices but the trace did not show (not measured)
};

// The plan and model must be the ones the trace ran: the occurrences per step follow from them.
TraceProfile profile_from_trace(const MeasuredTrace& t, const ModelSpec& m, const ParallelPlan& p);

}  // namespace podsim
