// The engine's face of a priced step: StepCosts and the schedule's program order (schedule.hpp) lowered to the
// per-device task graph of one training step (one pipeline's stages; data-parallel replicas are identical), and
// the engine's result read back as the critical stage's timing and a labelled timeline.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "models/step_costs.hpp"
#include "models/summarize.hpp"
#include "sim/engine.hpp"
#include "sim/task_graph.hpp"

namespace podsim {

struct LoweredStep {
    TaskGraph graph;
    int micro_batches = 0;
    int chunks_per_stage = 1;  // vpp
    // Per stage: its compute stream, its last compute task, its optimizer task and its last task.
    std::vector<uint32_t> compute_stream, last_compute, optimizer_task, tail_task;
};

// Requires costs.structural_ok() (check_split bounds the task count: ids fit 32 bits).
LoweredStep lower_step(const StepCosts& costs);

// The stage whose last task ends last, and where its time went, from the engine's run of `low.graph`.
StageTiming engine_timing(const LoweredStep& low, const SimResult& sim);

// One task of the step's timeline: which stage and stream ran what, when, and what its time was.
struct TimelineSpan {
    int stage = 0;
    std::string stream;  // "compute", "send_fwd", "send_bwd", "dp"
    std::string label;   // "F s0 c1 mb3", "B piece", "grad sync", "optimizer", "p2p"
    // Forward/backward compute tasks and their activation/gradient sends: 'F' or 'B', the stage's model chunk and
    // the micro-batch (a send carries its sender's); 0 / -1 for every other task.
    char pass = 0;
    int chunk = -1, micro_batch = -1;
    double start_s = 0, finish_s = 0;
    double compute_s = 0, exposed_comm_s = 0, optimizer_s = 0, side_comm_s = 0;  // parts of the duration
};
// `sim` must have been run with record_timeline.
std::vector<TimelineSpan> timeline_of(const LoweredStep& low, const SimResult& sim);

}  // namespace podsim
