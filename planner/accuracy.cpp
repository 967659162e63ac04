#include "planner/accuracy.hpp"

#include <fmt/format.h>

#include "hardware/json_reader.hpp"

namespace podsim {

Accuracy load_accuracy(const std::string& dir) {
    Accuracy a;
    a.file = dir + "/accuracy.json";
    const Json j = load_json_file(a.file);
    JsonObject o(j, a.file, "$");
    o.only_keys({"schema_version", "description", "source", "measured_with", "sets"});
    if (o.integer("schema_version") != 1) o.fail("schema_version", "expected 1");
    const Json& sets = o.array("sets");
    for (size_t i = 0; i < sets.size(); ++i) {
        JsonObject s(sets[i], a.file, "$.sets[" + std::to_string(i) + "]");
        s.only_keys({"id", "file", "description", "runs", "mape_pct", "max_error_pct", "worst_id", "by_chip"});
        AccuracySet x;
        x.id = s.string("id"), x.file = s.string("file"), x.description = s.string("description");
        x.runs = s.count("runs", 1, 1'000'000);
        x.mape_pct = s.number_in("mape_pct", 0, 1000), x.max_error_pct = s.number_in("max_error_pct", 0, 1000);
        x.worst_id = s.string("worst_id");
        const JsonObject chips = s.object("by_chip");
        for (const auto& [chip, _] : chips.raw().items()) {
            const JsonObject c = chips.object(chip);
            c.only_keys({"runs", "mape_pct", "max_error_pct"});
            x.by_chip[chip] = {c.count("runs", 1, 1'000'000), c.number_in("mape_pct", 0, 1000),
                               c.number_in("max_error_pct", 0, 1000)};
        }
        a.sets.push_back(std::move(x));
    }
    if (!a.set("visible") || !a.set("held_out")) o.fail("sets", "a set with id \"visible\" and one with id \"held_out\"");
    return a;
}

const AccuracySet* Accuracy::set(const std::string& id) const {
    for (const auto& s : sets)
        if (s.id == id) return &s;
    return nullptr;
}

AccuracyBand Accuracy::band_for(const std::string& chip_id, const std::string& chip_name) const {
    const AccuracySet* vis = set("visible");
    const AccuracySet* held = set("held_out");
    AccuracyBand b;
    const std::string held_words =
        held ? fmt::format("{} runs held out from fitting: mean {:.1f}%, worst {:.0f}%", held->runs, held->mape_pct,
                           held->max_error_pct)
             : "";
    const ChipAccuracy* mine = nullptr;
    if (vis && vis->by_chip.count(chip_id)) mine = &vis->by_chip.at(chip_id);
    // A chip with no visible runs but three or more in a held-out set: its own error there, said as held out.
    const AccuracySet* held_mine = nullptr;
    if (!mine || mine->runs < 3)
        for (const auto& s : sets)
            if (&s != vis && s.by_chip.count(chip_id) && s.by_chip.at(chip_id).runs >= 3) {
                held_mine = &s;
                break;
            }
    if (mine && mine->runs >= 3) {
        b.typical_pct = mine->mape_pct, b.worst_pct = mine->max_error_pct;
        b.basis = fmt::format("podsim's mean error on {} published {} runs (worst {:.0f}%); on {}", mine->runs, chip_name,
                              mine->max_error_pct, held_words);
    } else if (held_mine) {
        const ChipAccuracy& c = held_mine->by_chip.at(chip_id);
        b.typical_pct = c.mape_pct, b.worst_pct = c.max_error_pct;
        b.basis = fmt::format("podsim's mean error on {} published {} runs held out from fitting ({}; worst {:.0f}%)",
                              c.runs, chip_name, held_mine->file, c.max_error_pct);
    } else if (held) {
        b.typical_pct = held->mape_pct, b.worst_pct = held->max_error_pct;
        b.basis = fmt::format("no published {} run in podsim's validation, so the error on {}", chip_name, held_words);
    }
    return b;
}

}  // namespace podsim
