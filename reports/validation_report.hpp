// Predicted vs published step times for a set of published runs: per-run error, MAPE and worst error.
#pragma once
#include <string>
#include <vector>

#include "hardware/json_reader.hpp"

namespace podsim {

struct ValidationRow {
    std::string id;
    std::string system;
    double published_step_time_s = 0;
    double predicted_step_time_s = 0;
    double error_pct = 0;  // signed: (predicted - published) / published
    double mfu = 0;
    bool fits = true;
    std::string note;      // infeasible reason, if any
};

struct ValidationSummary {
    std::vector<ValidationRow> rows;
    double mape_pct = 0;
    double max_error_pct = 0;
    std::string worst_id;
};

ValidationSummary summarize(std::vector<ValidationRow> rows);
std::string validation_text(const ValidationSummary& v);
Json validation_json(const ValidationSummary& v);

}  // namespace podsim
