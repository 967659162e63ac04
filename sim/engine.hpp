// Discrete-event engine: runs a TaskGraph (in-order streams + dependencies) and reports when everything ends.
#pragma once
#include <vector>

#include "sim/task_graph.hpp"

namespace podsim {

struct StreamStats {
    double busy_s = 0;
    double first_start_s = 0;
    double last_finish_s = 0;
    std::array<double, kMaxParts> by_category_s{};
};

struct Span {
    uint32_t task;
    double start_s;
    double finish_s;
};

struct SimResult {
    double makespan_s = 0;
    std::vector<StreamStats> streams;
    std::vector<double> start_s, finish_s;  // per task
    std::vector<Span> timeline;             // filled only when asked for, in start order
    size_t events = 0;
};

struct EngineOptions {
    bool record_timeline = false;
};

// Throws std::logic_error if the graph has a cycle (some task can never start).
SimResult run_engine(const TaskGraph& g, const EngineOptions& opt = {});

}  // namespace podsim
