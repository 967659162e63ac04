#include "reports/validation_report.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "reports/json_parts.hpp"

namespace podsim {

ValidationSummary summarize(std::vector<ValidationRow> rows) {
    ValidationSummary v;
    double sum = 0;
    for (auto& r : rows) {
        if (!r.error.empty()) {
            ++v.failed;
            continue;
        }
        ++v.predicted;
        r.error_pct = 100 * (r.predicted_step_time_s - r.published_step_time_s) / r.published_step_time_s;
        const double e = std::fabs(r.error_pct);
        sum += e;
        if (e >= v.max_error_pct) v.max_error_pct = e, v.worst_id = r.id;
        auto g = std::find_if(v.groups.begin(), v.groups.end(), [&](const GroupError& x) { return x.group == r.group; });
        if (g == v.groups.end()) g = v.groups.insert(v.groups.end(), GroupError{r.group});
        g->mape_pct = (g->mape_pct * g->runs + e) / (g->runs + 1);
        g->max_error_pct = std::max(g->max_error_pct, e);
        ++g->runs;
    }
    v.mape_pct = v.predicted == 0 ? 0 : sum / v.predicted;
    v.rows = std::move(rows);
    return v;
}

std::string validation_text(const ValidationSummary& v) {
    std::string o = fmt::format("{:<36} {:>22} {:>12} {:>12} {:>8} {:>6}\n", "id", "system", "published_s",
                                "predicted_s", "error%", "MFU%");
    for (const auto& r : v.rows) {
        if (!r.error.empty()) {
            o += fmt::format("{:<36} {:>22} {:>12.3f} {:>12} {:>8} {:>6}  error: {}\n", r.id, r.system,
                             r.published_step_time_s, "-", "-", "-", r.error);
            continue;
        }
        o += fmt::format("{:<36} {:>22} {:>12.3f} {:>12.3f} {:>+8.1f} {:>6.1f}{}\n", r.id, r.system,
                         r.published_step_time_s, r.predicted_step_time_s, r.error_pct, 100 * r.mfu,
                         r.fits ? "" : "  (memory model: does not fit)");
    }
    bool any_chosen = false;
    for (const auto& r : v.rows)
        if (!r.chosen.empty()) {
            if (!any_chosen) o += "\nunpublished settings completed by the plan search (best feasible step time):\n";
            any_chosen = true;
            std::string c;
            for (const auto& x : r.chosen) c += (c.empty() ? "" : ", ") + x;
            o += fmt::format("  {}: {}\n", r.id, c);
        }
    if (v.groups.size() > 1) {
        o += fmt::format("\n{:<40} {:>5} {:>8} {:>8}\n", "software stack / chip", "runs", "MAPE%", "worst%");
        for (const auto& g : v.groups)
            o += fmt::format("{:<40} {:>5} {:>8.2f} {:>8.2f}\n", g.group, g.runs, g.mape_pct, g.max_error_pct);
    }
    o += fmt::format("\nruns: {}   MAPE: {:.2f}%   worst: {:.2f}% ({})\n", v.predicted, v.mape_pct, v.max_error_pct,
                     v.worst_id);
    if (v.failed > 0) o += fmt::format("errors: {} run(s) could not be predicted (rows marked error above)\n", v.failed);
    return o;
}

Json validation_json(const ValidationSummary& v) {
    Json runs = Json::array();
    // Every run has the same keys; a run that could not be predicted has its prediction null and `error` set.
    for (const auto& r : v.rows) {
        const bool ok = r.error.empty();
        auto num = [&](double x) { return ok ? Json(x) : Json(nullptr); };
        runs.push_back({{"id", r.id},
                        {"system", r.chips > 0 ? Json{{"label", r.system}, {"chip", r.chip}, {"chips", r.chips}}
                                               : Json(nullptr)},
                        {"plan", ok && r.plan ? plan_json(*r.plan) : Json(nullptr)},
                        {"published_step_time_s", r.published_step_time_s > 0 ? Json(r.published_step_time_s) : Json(nullptr)},
                        {"predicted_step_time_s", num(r.predicted_step_time_s)}, {"error_pct", num(r.error_pct)},
                        {"mfu", num(r.mfu)}, {"fits_memory_model", ok ? Json(r.fits) : Json(nullptr)},
                        {"note", r.note}, {"group", r.group}, {"chosen", r.chosen},
                        {"error", ok ? Json(nullptr) : Json(r.error)}});
    }
    Json groups = Json::array();
    for (const auto& g : v.groups)
        groups.push_back({{"group", g.group}, {"runs", g.runs}, {"mape_pct", g.mape_pct},
                          {"max_error_pct", g.max_error_pct}});
    Json j = output_head("validate");
    j.update({{"runs", runs}, {"mape_pct", v.mape_pct}, {"max_error_pct", v.max_error_pct}, {"worst_id", v.worst_id},
              {"predicted", v.predicted}, {"failed", v.failed}, {"groups", groups}});
    return j;
}

}  // namespace podsim
