#include "reports/trace.hpp"

#include <map>

namespace podsim {

nlohmann::json perfetto_trace(const StepResult& r, const std::string& title) {
    nlohmann::json events = nlohmann::json::array();
    std::map<std::pair<int, std::string>, int> tids;
    const std::map<std::string, int> order = {{"compute", 1}, {"send_fwd", 2}, {"send_bwd", 3}, {"dp", 4}};
    for (const auto& s : r.timeline) {
        auto key = std::make_pair(s.stage, s.stream);
        if (!tids.count(key)) {
            const int tid = order.count(s.stream) ? order.at(s.stream) : 9;
            tids[key] = tid;
            if (!tids.count({s.stage, ""})) {
                tids[{s.stage, ""}] = 0;
                events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", s.stage},
                                  {"args", {{"name", "pipeline stage " + std::to_string(s.stage)}}}});
                events.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", s.stage}, {"args", {{"sort_index", s.stage}}}});
            }
            events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", s.stage}, {"tid", tid}, {"args", {{"name", s.stream}}}});
        }
        const double dur_us = (s.finish_s - s.start_s) * 1e6;
        events.push_back({{"ph", "X"},
                          {"name", s.label},
                          {"cat", s.stream},
                          {"pid", s.stage},
                          {"tid", tids[key]},
                          {"ts", s.start_s * 1e6},
                          {"dur", dur_us},
                          {"args",
                           {{"compute_s", s.compute_s},
                            {"exposed_comm_s", s.exposed_comm_s},
                            {"optimizer_s", s.optimizer_s},
                            {"side_comm_s", s.side_comm_s}}}});
    }
    return {{"traceEvents", events},
            {"displayTimeUnit", "ms"},
            {"otherData", {{"title", title}, {"step_time_s", r.step_time_s}, {"generator", "podsim"}}}};
}

}  // namespace podsim
