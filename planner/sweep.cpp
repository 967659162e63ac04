#include "planner/sweep.hpp"

#include "hardware/limits.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "hardware/input_error.hpp"

namespace podsim {

namespace {

const char* kAxes[] = {"system", "chip_scale", "model", "global_batch_seqs", "token_budget", "price_option", "region"};

PriceOption price_option(const std::string& v, const std::string& file, const std::string& path) {
    if (auto p = price_option_from_string(v)) return *p;
    throw InputError(file, path, "expected \"on-demand\", \"spot\", \"1y\" or \"3y\", got \"" + v + "\"");
}

// (Called on a value the scenario reader accepted, which takes a null field as absent: so does this.)
std::string system_label(const Json& sys) {
    auto text = [&](const char* key) -> std::optional<std::string> {
        auto it = sys.find(key);
        return it != sys.end() && it->is_string() ? std::optional(it->get<std::string>()) : std::nullopt;
    };
    auto given = [&](const char* key) { return sys.contains(key) && !sys[key].is_null(); };
    if (auto machine = text("machine_type"))
        return fmt::format("{} x {}", given("nodes") ? sys["nodes"].dump() : "0", *machine);
    std::string l = text("accelerator_type").value_or("?");
    if (given("slices")) l = sys["slices"].dump() + " x " + l;
    return l;
}

}  // namespace

// A sweep's grid is searched point by point: beyond this many points it is a batch job for several sweeps.
constexpr long long kMaxSweepPoints = 100'000;
// chip_scale multiplies the chip count: beyond 4096x no catalog system exists anyway.
constexpr double kMaxChipScale = 4096;

// The JSON path inside an axis value that a scenario error names: "$.model.heads" for the model axis is ".heads"
// after the value's own path; for a scalar axis nothing follows.
static std::string axis_inner_path(const std::string& scenario_path, const std::string& at, const std::string& axis) {
    if (axis != "system" && axis != "model") return "";
    const std::string prefix = "$." + at;
    return scenario_path.rfind(prefix, 0) == 0 ? scenario_path.substr(prefix.size()) : "";
}

Sweep load_sweep(const std::string& file, const Catalog& cat) {
    const Json j = load_json_file(file);
    JsonObject o(j, file, "$");
    o.only_keys({"schema_version", "name", "description", "scenario", "objective", "axes", "notes"});
    if (o.integer("schema_version") != 1) o.fail("schema_version", "expected 1");
    Sweep sw;
    sw.file = file;
    sw.name = o.string("name");
    const auto obj = objective_from_string(o.opt_string("objective").value_or("time"));
    if (!obj) o.fail("objective", "expected \"time\", \"cost\" or \"mfu\"");
    sw.objective = *obj;
    const std::string base_file = (std::filesystem::path(file).parent_path() / o.string("scenario")).string();
    const Json base = load_json_file(base_file);
    scenario_from_json(base, base_file, cat);  // the base itself must be valid, errors naming its own file

    const JsonObject axes = o.object("axes");
    axes.only_keys({"system", "chip_scale", "model", "global_batch_seqs", "token_budget", "price_option", "region"});
    // Each axis as a list of values; a missing axis is one value: the base's.
    struct Axis {
        std::string name;
        std::vector<Json> values;
    };
    std::vector<Axis> list;
    for (const char* name : kAxes) {
        if (!axes.has(name)) continue;
        const Json& arr = axes.array(name);
        if (arr.empty()) axes.fail(name, "expected a non-empty list");
        Axis a{name, {}};
        for (size_t i = 0; i < arr.size(); ++i) {
            const std::string path = axes.at_path(name) + "[" + std::to_string(i) + "]";
            const Json& v = arr[i];
            const std::string n = name;
            if ((n == "system" || n == "model") && !v.is_object()) throw InputError(file, path, "expected an object (as in a scenario)");
            if ((n == "chip_scale" || n == "global_batch_seqs" || n == "token_budget") && (!v.is_number() || v.get<double>() <= 0))
                throw InputError(file, path, "expected a positive number");
            if (n == "chip_scale" && v.get<double>() > kMaxChipScale)
                throw InputError(file, path, fmt::format("expected a multiple of the chip count up to {:g}", kMaxChipScale));
            if (n == "global_batch_seqs" && !v.is_number_integer()) throw InputError(file, path, "expected an integer");
            if ((n == "price_option" || n == "region") && !v.is_string()) throw InputError(file, path, "expected a string");
            if (n == "price_option") price_option(v.get<std::string>(), file, path);
            // Each value that changes the scenario must make a valid scenario with the base (ranges, catalog names,
            // prices in the region); an error is reported at its sweep path.
            if (n != "chip_scale" && n != "price_option") {
                Json trial = base;
                const char* at = n == "global_batch_seqs" ? "batch" : n == "token_budget" ? "training"
                                 : n == "region"          ? "pricing" : name;
                if (n == "system" || n == "model") trial[n] = v;
                else if (n == "region") trial["pricing"] = Json{{"region", v}};
                else trial[at][n] = v;
                try {
                    scenario_from_json(trial, file, cat);
                } catch (const InputError& e) {
                    const std::string what = e.what();
                    throw InputError(file, path + axis_inner_path(e.json_path(), at, n), what.substr(what.rfind(": ") + 2));
                }
            }
            a.values.push_back(v);
        }
        sw.axis_names.push_back(name);
        list.push_back(std::move(a));
    }
    // The grid: every combination, first axis slowest; its size is checked before anything is built.
    double points = 1;
    for (const auto& a : list) points *= double(a.values.size());
    if (points > kMaxSweepPoints)
        o.fail("axes", fmt::format("the grid has {:g} points, more than the {} a sweep runs (split it into several sweeps)",
                                   points, kMaxSweepPoints));
    std::vector<size_t> idx(list.size(), 0);
    while (true) {
        Json pj = base;
        SweepPoint pt;
        double scale = 1;
        for (size_t k = 0; k < list.size(); ++k) {
            const std::string& n = list[k].name;
            const Json& v = list[k].values[idx[k]];
            std::string shown;
            if (n == "system") {
                pj["system"] = v, shown = system_label(v);
                // Prices are per SKU and region; unless a region axis says otherwise, a new system is priced in
                // the catalog's region for its SKU.
                if (std::find(sw.axis_names.begin(), sw.axis_names.end(), "region") == sw.axis_names.end())
                    pj.erase("pricing");
            }
            else if (n == "model") pj["model"] = v, shown = v.contains("name") && v["name"].is_string() ? v["name"].get<std::string>() : "model";
            else if (n == "global_batch_seqs") pj["batch"]["global_batch_seqs"] = v, shown = v.dump();
            else if (n == "token_budget") pj["training"]["token_budget"] = v, shown = fmt::format("{:g}", v.get<double>());
            else if (n == "region") pj["pricing"] = Json{{"region", v}}, shown = v.get<std::string>();
            else if (n == "chip_scale") scale = v.get<double>(), shown = fmt::format("{:g}", scale);
            else if (n == "price_option") pt.price = price_option(v.get<std::string>(), file, ""), shown = v.get<std::string>();
            pt.axes.emplace_back(n, shown);
        }
        pt.scenario = scenario_from_json(pj, file, cat);
        if (scale != 1) {
            const long long chips = std::llround(pt.scenario.system.chips * scale);
            auto sys = chips <= limits::max_chips ? cat.resized(pt.scenario.system, static_cast<int>(chips))
                                                  : std::nullopt;
            if (!sys) throw InputError(file, "$.axes.chip_scale", fmt::format("x{:g} of {} ({} chips) is no {} system", scale,
                                                                              pt.scenario.system.label, chips,
                                                                              pt.scenario.system.chip.name));
            pt.scenario.system = *sys;
        }
        sw.points.push_back(std::move(pt));
        size_t k = list.size();
        while (k > 0 && ++idx[k - 1] == list[k - 1].values.size()) idx[--k] = 0;
        if (k == 0) break;
    }
    return sw;
}

SweepRow run_sweep_point(const SweepPoint& p, Objective objective, const Catalog& cat, const ReliabilityInputs& rel,
                         const SimBudget& budget, const SweepAdvice& advice) {
    SweepRow row;
    row.point = &p;
    SearchOptions o;
    o.budget = budget;
    o.objective = objective;
    o.price = p.price;
    o.top = 1;
    o.confirm = 10;
    o.deadline_days = advice.deadline_days;
    o.budget_usd = advice.budget_usd;
    if (objective == Objective::cost && !system_usd_per_hour(cat, p.scenario.system, p.scenario.region, p.price,
                                                             p.scenario.negotiated ? &*p.scenario.negotiated : nullptr))
        o.objective = Objective::time;  // no price here: rank by time, the row says there is no price
    row.search = search_plans(p.scenario, cat, rel, o);
    return row;
}

}  // namespace podsim
