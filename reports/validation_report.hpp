// Predicted vs published step times for a set of published runs: per-run error, MAPE and worst error.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hardware/json_reader.hpp"
#include "models/plan.hpp"

namespace podsim {

struct ValidationRow {
    std::string id;
    std::string system;    // the system's label, chip id and chip count
    std::string chip;
    int chips = 0;
    std::optional<ParallelPlan> plan;  // the plan simulated (completed where the record left settings out)
    double published_step_time_s = 0;
    double predicted_step_time_s = 0;
    double error_pct = 0;  // signed: (predicted - published) / published
    double mfu = 0;
    bool fits = true;
    std::string note;      // infeasible reason, if any
    std::string group;     // software stack / chip, for the per-group error
    std::vector<std::string> chosen;  // unpublished settings the plan completion chose
    std::string error;     // non-empty: the record could not be read or simulated (no prediction)
};

struct GroupError {
    std::string group;
    int runs = 0;
    double mape_pct = 0, max_error_pct = 0;
};

struct ValidationSummary {
    std::vector<ValidationRow> rows;
    double mape_pct = 0;
    double max_error_pct = 0;
    std::string worst_id;
    int predicted = 0, failed = 0;  // rows with a prediction; rows with an error
    std::vector<GroupError> groups;   // by software stack and chip, in first-seen order
};

// MAPE and worst error over the rows with a prediction; error rows are counted apart.
ValidationSummary summarize(std::vector<ValidationRow> rows);
std::string validation_text(const ValidationSummary& v);
Json validation_json(const ValidationSummary& v);

}  // namespace podsim
