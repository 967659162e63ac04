#include "reports/validation_report.hpp"

#include <cmath>
#include <fmt/format.h>

namespace podsim {

ValidationSummary summarize(std::vector<ValidationRow> rows) {
    ValidationSummary v;
    double sum = 0;
    for (auto& r : rows) {
        r.error_pct = 100 * (r.predicted_step_time_s - r.published_step_time_s) / r.published_step_time_s;
        sum += std::fabs(r.error_pct);
        if (std::fabs(r.error_pct) >= v.max_error_pct) v.max_error_pct = std::fabs(r.error_pct), v.worst_id = r.id;
    }
    v.mape_pct = rows.empty() ? 0 : sum / rows.size();
    v.rows = std::move(rows);
    return v;
}

std::string validation_text(const ValidationSummary& v) {
    std::string o = fmt::format("{:<36} {:>22} {:>12} {:>12} {:>8} {:>6}\n", "id", "system", "published_s",
                                "predicted_s", "error%", "MFU%");
    for (const auto& r : v.rows) {
        o += fmt::format("{:<36} {:>22} {:>12.3f} {:>12.3f} {:>+8.1f} {:>6.1f}{}\n", r.id, r.system,
                         r.published_step_time_s, r.predicted_step_time_s, r.error_pct, 100 * r.mfu,
                         r.fits ? "" : "  (memory model: does not fit)");
    }
    o += fmt::format("\nruns: {}   MAPE: {:.2f}%   worst: {:.2f}% ({})\n", v.rows.size(), v.mape_pct, v.max_error_pct,
                     v.worst_id);
    return o;
}

Json validation_json(const ValidationSummary& v) {
    Json runs = Json::array();
    for (const auto& r : v.rows)
        runs.push_back({{"id", r.id}, {"system", r.system}, {"published_step_time_s", r.published_step_time_s},
                        {"predicted_step_time_s", r.predicted_step_time_s}, {"error_pct", r.error_pct},
                        {"mfu", r.mfu}, {"fits_memory_model", r.fits}, {"note", r.note}});
    return {{"schema_version", 1}, {"runs", runs}, {"mape_pct", v.mape_pct}, {"max_error_pct", v.max_error_pct},
            {"worst_id", v.worst_id}};
}

}  // namespace podsim
