#include "sim/task_graph.hpp"

#include <stdexcept>

namespace podsim {

uint32_t TaskGraph::add_stream(std::string name) {
    stream_names.push_back(std::move(name));
    return static_cast<uint32_t>(stream_names.size() - 1);
}

uint32_t TaskGraph::add_cost_class(CostClass c) {
    classes_.push_back(std::move(c));
    return static_cast<uint32_t>(classes_.size() - 1);
}

uint32_t TaskGraph::add_task(uint32_t stream, uint32_t cost_class, uint32_t tag) {
    if (stream >= stream_names.size() || cost_class >= classes_.size())
        throw std::logic_error("TaskGraph::add_task: unknown stream or cost class");
    tasks_.push_back({stream, cost_class, tag});
    return static_cast<uint32_t>(tasks_.size() - 1);
}

void TaskGraph::add_dependency(uint32_t before, uint32_t after) {
    if (before >= tasks_.size() || after >= tasks_.size() || before == after)
        throw std::logic_error("TaskGraph::add_dependency: bad task index");
    edges_.emplace_back(before, after);
}

void TaskGraph::reserve(size_t tasks, size_t edges) {
    tasks_.reserve(tasks);
    edges_.reserve(edges);
}

}  // namespace podsim
