#include "fuzz/fuzz_entry.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>
#include <system_error>

#include "hardware/catalog.hpp"
#include "hardware/input_error.hpp"
#include "hardware/json_reader.hpp"
#include "models/fast_step.hpp"
#include "models/published_run.hpp"
#include "models/result_checks.hpp"
#include "models/scenario.hpp"
#include "models/step.hpp"
#include "planner/claim_check.hpp"
#include "planner/sweep.hpp"

#ifndef PODSIM_SCENARIO_DIR
#error "PODSIM_SCENARIO_DIR must name the shipped scenarios/ folder"
#endif

namespace fs = std::filesystem;

namespace podsim::fuzz {

const char* to_string(Target t) {
    switch (t) {
        case Target::scenario: return "scenario";
        case Target::published_run: return "published_run";
        case Target::sweep: return "sweep";
        case Target::claim: return "claim";
    }
    return "?";
}

std::optional<Target> target_from_name(std::string_view name) {
    for (Target t : {Target::scenario, Target::published_run, Target::sweep, Target::claim})
        if (name == to_string(t)) return t;
    return std::nullopt;
}

const char* to_string(Outcome o) {
    switch (o) {
        case Outcome::input_error: return "input error";
        case Outcome::infeasible: return "infeasible";
        case Outcome::simulated: return "simulated";
    }
    return "?";
}

namespace {

const Catalog& catalog() {
    static const Catalog cat = Catalog::load(default_catalog_dir());
    return cat;
}

// A private copy of scenarios/ in a fresh temporary folder (one per process), so that a sweep's or claim's
// relative "scenario" (../gpt3-175b-128xa3-mega.json) resolves as it does beside the shipped files, and inputs are
// written next to them (sweeps/input.json, claims/input.json) without touching the checkout.
struct Workspace {
    fs::path root;
    Workspace() {
        std::string tmpl = (fs::temp_directory_path() / "podsim-fuzz-XXXXXX").string();
        if (!mkdtemp(tmpl.data())) throw std::runtime_error("fuzz: cannot create a temporary folder");
        root = fs::canonical(tmpl);
        fs::copy(PODSIM_SCENARIO_DIR, root, fs::copy_options::recursive);
        fs::create_directories(root / "sweeps");
        fs::create_directories(root / "claims");
        fs::create_directories(root / "published");
    }
    ~Workspace() {
        std::error_code ec;
        fs::remove_all(root, ec);
    }
    std::string write(const char* sub, std::string_view bytes) const {
        const fs::path p = root / sub / "input.json";
        std::ofstream out(p, std::ios::binary | std::ios::trunc);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        out.close();
        if (!out) throw std::runtime_error("fuzz: cannot write " + p.string());
        return p.string();
    }
    // Only scenarios inside the private copy are followed (a claim's "scenario" could name any file on the machine).
    bool inside(const std::string& file) const {
        std::error_code ec;
        const fs::path c = fs::weakly_canonical(file, ec);
        if (ec) return false;
        const auto rel = c.lexically_relative(root);
        return !rel.empty() && *rel.begin() != "..";
    }
};

const Workspace& workspace() {
    static const Workspace w;
    return w;
}

StepOptions step_options() {
    StepOptions opt;
    opt.budget.max_tasks = kMaxTasks;
    opt.budget.max_memory_bytes = kMaxMemoryBytes;
    opt.budget.max_completion_plans = kMaxCompletionPlans;
    return opt;
}

// The engine's step: a feasible result must have every figure in its physical range (check_physical throws
// InternalError otherwise: a printed lie is a finding like a crash).
// With the scenario's evaluation, its pass is priced too (and its figure checked by simulate_step).
Outcome step(const ModelSpec& m, const SystemSpec& sys, const ParallelPlan& p, StepResult* out = nullptr,
             const std::optional<EvaluationSpec>& evaluation = std::nullopt) {
    StepOptions opt = step_options();
    opt.evaluation = evaluation;
    StepResult r = simulate_step(m, sys, p, opt);
    // (simulate_step itself checks a feasible result's figures: check_physical throws InternalError.)
    const Outcome o = r.feasible ? Outcome::simulated : Outcome::infeasible;
    if (out) *out = std::move(r);
    return o;
}

// The planner's closed form on the same plan: it must not crash, and a plan it keeps must have a finite,
// positive step time and utilizations in [0, 1].
void closed_form(const ModelSpec& m, const SystemSpec& sys, const ParallelPlan& p) {
    SimBudget budget;
    budget.max_tasks = kMaxTasks;
    budget.max_memory_bytes = kMaxMemoryBytes;
    StepEstimator est(m, sys, true, budget);
    const StepEstimate e = est.estimate(p);
    if (!e.feasible()) return;
    const double ceiling = utilization_ceiling(sys.chip, p.precision);
    const bool ok = std::isfinite(e.step_time_s) && e.step_time_s > 0 && std::isfinite(e.tokens_per_s) &&
                    e.tokens_per_s >= 0 && e.mfu >= 0 && e.mfu <= ceiling && e.hfu >= 0 && e.hfu <= ceiling;
    if (!ok)
        throw InternalError("closed form out of range for " + plan_label(p) + ": step " +
                            std::to_string(e.step_time_s) + " s, MFU " + std::to_string(e.mfu) + ", HFU " +
                            std::to_string(e.hfu));
}

Outcome run_scenario(std::string_view bytes) {
    const std::string file = "fuzz-scenario.json";
    Scenario s = scenario_from_json(parse_json_text(std::string(bytes), file), file, catalog());
    CompletionOptions co;
    co.budget = step_options().budget;
    complete_scenario(s, co);
    const Outcome o = step(s.model, s.system, s.plan, nullptr, s.evaluation);
    closed_form(s.model, s.system, s.plan);
    return o;
}

Outcome run_published(std::string_view bytes) {
    const std::string file = workspace().write("published", bytes);
    const auto runs = load_published_runs(file, catalog());
    if (!runs.front().error.empty()) throw InputError(file, "$[0]", runs.front().error);
    const PublishedPrediction pred = simulate_published(runs.front(), step_options());
    return pred.step.feasible ? Outcome::simulated : Outcome::infeasible;
}

Outcome run_sweep(std::string_view bytes) {
    const Sweep sw = load_sweep(workspace().write("sweeps", bytes), catalog());
    if (sw.points.empty()) return Outcome::infeasible;
    const Scenario& s = sw.points.front().scenario;
    const Outcome o = step(s.model, s.system, s.plan);
    closed_form(s.model, s.system, s.plan);
    return o;
}

Outcome run_claim(std::string_view bytes) {
    const Workspace& w = workspace();
    const Claim c = load_claim(w.write("claims", bytes));
    if (!w.inside(c.scenario_file)) return Outcome::infeasible;  // not followed outside the private copy
    const Scenario s = load_scenario(c.scenario_file, catalog());
    // The shipped scenarios do not change while fuzzing: one simulation each.
    static std::map<std::string, StepResult> simulated;
    auto it = simulated.find(c.scenario_file);
    if (it == simulated.end()) {
        StepResult r;
        step(s.model, s.system, s.plan, &r);
        it = simulated.emplace(c.scenario_file, std::move(r)).first;
    }
    const StepResult& r = it->second;
    check_claim(c, s, r);
    return r.feasible ? Outcome::simulated : Outcome::infeasible;
}

}  // namespace

Outcome run_input(Target t, std::string_view bytes) {
    try {
        switch (t) {
            case Target::scenario: return run_scenario(bytes);
            case Target::published_run: return run_published(bytes);
            case Target::sweep: return run_sweep(bytes);
            case Target::claim: return run_claim(bytes);
        }
    } catch (const InputError&) {
        return Outcome::input_error;
    }
    throw std::logic_error("fuzz: unknown target");
}

}  // namespace podsim::fuzz
