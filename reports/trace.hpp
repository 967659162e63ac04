// One simulated training step as a Chrome / Perfetto trace (JSON trace-event format, the format chrome://tracing,
// ui.perfetto.dev and TensorBoard's trace viewer read): a process per pipeline stage; threads for its compute
// stream, its collectives, its activation and gradient sends and its data-parallel gradient sync.
//
//  - every task of the step (forward/backward of a model chunk for a micro-batch, sends, gradient buckets,
//    optimizer) as a complete event, with its parts (compute, exposed communication, ...) in args;
//  - inside each forward/backward task, one event per transformer layer (model layer numbers), and inside the layers
//    of each stage's first and last micro-batch, one event per kernel; their collectives on the stage's
//    "collectives" thread with size, group, collective and algorithm, drawn where they run: overlapped ones beside
//    the kernels that hide them, blocking ones with the compute stream waiting;
//  - flow arrows from each activation (gradient) send to the pass of the next (previous) stage it feeds.
//
// Per-layer and per-kernel events divide a task's simulated time in proportion to the priced op times (one layer's
// ops, one micro-batch): the task's total is the engine's; the split inside it is the pricing's.
#pragma once
#include <nlohmann/json.hpp>

#include "models/step.hpp"

namespace podsim {

struct TraceOptions {
    // Per-layer events stop (past the first and last micro-batch of each stage) once this many are written, so
    // that a trace of thousands of micro-batches stays small enough to open.
    size_t max_layer_events = 200'000;
};

// `r` must come from simulate_step with record_timeline.
nlohmann::json perfetto_trace(const StepResult& r, const std::string& title, const std::string& plan = "",
                              const TraceOptions& o = {});

}  // namespace podsim
