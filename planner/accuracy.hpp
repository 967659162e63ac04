// podsim's measured error on published runs (hardware/catalog/accuracy.json), for the error band a report shows
// beside days and dollars. The file is measured, not fitted: tests/test_validation_accuracy_file.cpp re-runs
// `validate` on each set and fails when the figures have drifted from the model.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace podsim {

struct ChipAccuracy {
    int runs = 0;
    double mape_pct = 0, max_error_pct = 0;
};

struct AccuracySet {
    std::string id;    // "visible" (fitted on), "held_out" (never fitted on), "moe"
    std::string file;  // the published-run file, relative to the source tree
    std::string description;
    int runs = 0;
    double mape_pct = 0, max_error_pct = 0;
    std::string worst_id;
    std::map<std::string, ChipAccuracy> by_chip;  // chip id -> its runs' error
};

struct AccuracyBand {
    double typical_pct = 0;  // the mean absolute error to expect
    double worst_pct = 0;
    std::string basis;  // which runs it comes from, in words
};

struct Accuracy {
    std::string file;
    std::vector<AccuracySet> sets;
    const AccuracySet* set(const std::string& id) const;
    // The band for a plan on `chip_id`: the chip's own runs where there are at least three, else the runs held out
    // from fitting (a chip podsim has no run on is, to the model, like a held-out run).
    AccuracyBand band_for(const std::string& chip_id, const std::string& chip_name) const;
};

Accuracy load_accuracy(const std::string& catalog_dir);

}  // namespace podsim
