// Data parallelism for real on one machine: two processes train the CPU step and all-reduce their gradients over a
// TCP connection on the loopback interface; and the loopback link itself, measured.
#pragma once
#include <vector>

#include "models/calibration/cpu_train_step.hpp"

namespace podsim::calib {

struct LoopbackLink {
    double bytes_per_s = 0;  // each way, while both directions carry data (as in a 2-rank ring step)
    double latency_s = 0;    // one way, small message
};

// Measured between two processes over 127.0.0.1 (exchanges of `bytes` each way; 1-byte ping-pongs).
LoopbackLink measure_loopback(double bytes = 64e6);

struct DpStepTiming {
    double step_s = 0;       // fastest full step (compute + all-reduce + update), slowest rank
    double allreduce_s = 0;  // its gradient all-reduce part
    std::vector<size_t> gradient_bytes;  // per tensor, as all-reduced
};

// Two ranks (processes, one BLAS thread each), each training `shape` on its own micro-batches; after backward
// every gradient tensor is all-reduced (ring of two: reduce-scatter then all-gather) before AdamW.
DpStepTiming measure_dp_step(const TinyGpt& shape, int steps);

}  // namespace podsim::calib
