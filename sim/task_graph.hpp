// The narrow waist between workload and engine: tasks on in-order streams, with dependencies.
// The engine knows streams, tasks, durations and named time categories; nothing about models.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace podsim {

inline constexpr int kMaxParts = 6;

// A duration shared by many tasks, split into categories (indices into TaskGraph::category_names).
struct CostClass {
    double duration_s = 0;
    std::array<double, kMaxParts> parts_s{};  // sums to duration_s
    std::string label;
};

struct Task {
    uint32_t stream = 0;
    uint32_t cost_class = 0;
    uint32_t tag = 0;  // opaque to the engine (the builder's own id, for timelines)
};

class TaskGraph {
public:
    std::vector<std::string> category_names;  // at most kMaxParts
    std::vector<std::string> stream_names;

    uint32_t add_stream(std::string name);
    uint32_t add_cost_class(CostClass c);
    // Tasks on one stream run in the order they are added.
    uint32_t add_task(uint32_t stream, uint32_t cost_class, uint32_t tag = 0);
    void add_dependency(uint32_t before, uint32_t after);

    size_t task_count() const { return tasks_.size(); }
    const std::vector<Task>& tasks() const { return tasks_; }
    const std::vector<CostClass>& cost_classes() const { return classes_; }
    const std::vector<std::pair<uint32_t, uint32_t>>& edges() const { return edges_; }
    void reserve(size_t tasks, size_t edges);

private:
    std::vector<Task> tasks_;
    std::vector<CostClass> classes_;
    std::vector<std::pair<uint32_t, uint32_t>> edges_;
};

}  // namespace podsim
