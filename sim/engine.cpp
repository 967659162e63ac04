#include "sim/engine.hpp"

#include <algorithm>
#include <queue>
#include <stdexcept>

namespace podsim {

SimResult run_engine(const TaskGraph& g, const EngineOptions& opt) {
    const auto& tasks = g.tasks();
    const auto& classes = g.cost_classes();
    const size_t n = tasks.size();
    const size_t ns = g.stream_names.size();

    // Successor lists in CSR form; the stream order is an implicit edge from each task to the next on its stream.
    std::vector<uint32_t> pending(n, 0), offset(n + 1, 0), succ(g.edges().size());
    for (const auto& [a, b] : g.edges()) ++offset[a + 1], ++pending[b];
    for (size_t i = 0; i < n; ++i) offset[i + 1] += offset[i];
    {
        std::vector<uint32_t> fill(offset.begin(), offset.end() - 1);
        for (const auto& [a, b] : g.edges()) succ[fill[a]++] = b;
    }
    std::vector<uint32_t> next_on_stream(n, UINT32_MAX), last_on_stream(ns, UINT32_MAX);
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t s = tasks[i].stream;
        if (last_on_stream[s] != UINT32_MAX) {
            next_on_stream[last_on_stream[s]] = i;
            ++pending[i];
        }
        last_on_stream[s] = i;
    }

    SimResult r;
    r.streams.assign(ns, {});
    std::vector<bool> stream_started(ns, false);
    std::vector<double>& ready_at = r.start_s;
    ready_at.assign(n, 0.0);
    r.finish_s.assign(n, 0.0);
    using Event = std::pair<double, uint32_t>;  // (finish time, task)
    std::priority_queue<Event, std::vector<Event>, std::greater<>> events;

    auto start = [&](uint32_t t) {
        const auto& c = classes[tasks[t].cost_class];
        const double s = ready_at[t];
        const double f = s + c.duration_s;
        r.finish_s[t] = f;
        auto& st = r.streams[tasks[t].stream];
        if (!stream_started[tasks[t].stream]) st.first_start_s = s, stream_started[tasks[t].stream] = true;
        st.busy_s += c.duration_s;
        for (int k = 0; k < kMaxParts; ++k) st.by_category_s[k] += c.parts_s[k];
        st.last_finish_s = std::max(st.last_finish_s, f);
        if (opt.record_timeline) r.timeline.push_back({t, s, f});
        events.emplace(f, t);
    };

    for (uint32_t i = 0; i < n; ++i)
        if (pending[i] == 0) start(i);

    size_t done = 0;
    while (!events.empty()) {
        // Plain locals, not a structured binding: clang 14 cannot capture bindings in the lambda below.
        const double t_now = events.top().first;
        const uint32_t t = events.top().second;
        events.pop();
        ++done;
        r.makespan_s = std::max(r.makespan_s, t_now);
        auto release = [&](uint32_t s) {
            ready_at[s] = std::max(ready_at[s], t_now);
            if (--pending[s] == 0) start(s);
        };
        for (uint32_t k = offset[t]; k < offset[t + 1]; ++k) release(succ[k]);
        if (next_on_stream[t] != UINT32_MAX) release(next_on_stream[t]);
    }
    r.events = done;
    if (done != n) throw std::logic_error("run_engine: the task graph has a cycle; " + std::to_string(n - done) +
                                          " tasks never became ready");
    return r;
}

}  // namespace podsim
