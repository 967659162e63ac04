// podsim profile: a measured step against the simulated one (issue #15).
//   profile record SCENARIO --out TRACE.json [--steps N]   runs the C++ CPU training step (models/calibration) of a
//       host-cpu scenario's shape and writes it as a Chrome trace (every region named as podsim names its op)
//   profile compare SCENARIO TRACE.json [--format json]      reads a Chrome trace (PyTorch profiler / Kineto, the JAX
//       profiler's trace-viewer export, or the above), attributes its time to podsim's ops and categories, and prints
//       measured vs simulated per op and per category
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iostream>

#include "cli/commands.hpp"
#include "hardware/catalog.hpp"
#include "hardware/calibration/kernel_profile.hpp"
#include "models/calibration/cpu_train_step.hpp"
#include "models/profile_compare.hpp"
#include "models/scenario.hpp"
#include "reports/format.hpp"
#include "reports/json_parts.hpp"

namespace podsim {

namespace {

int record(const CommonFlags& f) {
    if (f.positional.size() != 2 || f.out.empty())
        throw UsageError("profile record: expected SCENARIO.json --out TRACE.json [--steps N]");
    const int steps = int_flag(f, "profile record", "--steps", 3, 1, 1000);
    const Catalog cat = Catalog::load(default_catalog_dir());
    Scenario s = load_scenario(f.positional[1], cat);
    complete_scenario(s);
    if (s.system.chip.id != "host-cpu")
        throw UsageError("profile record: runs the CPU training step, so the scenario's system must be host-cpu (e.g. "
                         "scenarios/cpu-host-gpt.json); got " + s.system.label);
    const ModelSpec& m = s.model;
    if (m.activation != Activation::gelu || m.norm != Norm::layernorm || m.bias || m.moe.experts > 0 || s.plan.tp != 1 ||
        s.plan.pp != 1 || s.plan.cp != 1 || s.plan.dp != 1)
        throw UsageError("profile record: the CPU step is a dense GELU/LayerNorm decoder without biases on one rank "
                         "(tp = pp = cp = dp = 1)");
    calib::TinyGpt t{static_cast<int>(m.layers), static_cast<int>(m.hidden), static_cast<int>(m.heads),
                     static_cast<int>(m.ffn_hidden), static_cast<int>(m.vocab), static_cast<int>(m.seq_len),
                     static_cast<int>(s.plan.micro_batch), static_cast<int>(s.plan.micro_batches())};
    calib::CpuTrainStep step(t);
    step.step();  // warm-up, not recorded
    std::vector<calib::StepSpan> spans;
    const auto origin = std::chrono::steady_clock::now();
    Json events = Json::array();
    for (int k = 0; k < steps; ++k) {
        const double t0 = std::chrono::duration<double>(std::chrono::steady_clock::now() - origin).count();
        step.record(&spans, origin);
        step.step();
        step.record(nullptr, origin);
        const double t1 = std::chrono::duration<double>(std::chrono::steady_clock::now() - origin).count();
        // PyTorch profiler's step marker, so that any reader of Kineto traces finds the steps.
        events.push_back({{"ph", "X"}, {"name", fmt::format("ProfilerStep#{}", k)}, {"cat", "user_annotation"},
                          {"pid", 0}, {"tid", 0}, {"ts", t0 * 1e6}, {"dur", (t1 - t0) * 1e6}});
    }
    for (const auto& sp : spans)
        events.push_back({{"ph", "X"}, {"name", sp.name}, {"cat", sp.category}, {"pid", 0}, {"tid", 1},
                          {"ts", sp.start_s * 1e6}, {"dur", sp.dur_s * 1e6}, {"args", {{"layer", sp.layer}}}});
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", 0}, {"tid", 1}, {"args", {{"name", "CPU step"}}}});
    const Json trace = {{"traceEvents", events},
                        {"displayTimeUnit", "ms"},
                        {"otherData", {{"generator", "podsim profile record"}, {"steps", steps},
                                       {"scenario", shareable_path(s.file)}}}};
    emit(trace.dump() + "\n", f.out);
    std::cout << fmt::format("podsim profile: {} steps of the CPU training step, {} regions, written to {}\n", steps,
                             spans.size(), f.out);
    return 0;
}

int compare(const CommonFlags& f) {
    if (f.positional.size() != 3) throw UsageError("profile compare: expected SCENARIO.json TRACE.json");
    const Catalog cat = Catalog::load(default_catalog_dir());
    Scenario s = load_scenario(f.positional[1], cat);
    complete_scenario(s);
    const MeasuredTrace t = read_chrome_trace(load_json_file(f.positional[2]), f.positional[2]);
    StepOptions opt;
    opt.budget = budget_flags(f, "profile");
    calib::KernelProfile kernels;
    if (!f.kernel_profile.empty()) kernels = calib::load_kernel_profile(f.kernel_profile), opt.kernels = &kernels;
    const StepResult sim = simulate_step(s.model, s.system, s.plan, opt);
    if (!sim.feasible) throw UsageError("profile compare: the scenario's plan is infeasible: " + sim.infeasible.front());
    const ProfileComparison c = compare_profile(t, sim, s.model, s.plan);
    std::string out;
    if (f.format == "json") {
        Json j = output_head("profile");
        Json ops = Json::array();
        for (const auto& o : c.ops)
            ops.push_back({{"op", o.op}, {"measured_s", o.events ? Json(o.measured_s) : Json(nullptr)},
                           {"simulated_s", o.simulated_s}, {"events", o.events},
                           {"error_pct", o.events ? Json(o.error_pct()) : Json(nullptr)}});
        Json unnamed = Json::array();
        for (const auto& [n, d] : c.largest_unnamed) unnamed.push_back({{"name", n}, {"per_step_s", d}});
        j.update({{"scenario", scenario_ref_json(s)}, {"trace", {{"file", f.positional[2]}, {"format", t.format},
                                                                  {"steps", t.steps}, {"events", t.events.size()}}},
                  {"measured_step_s", c.measured_step_s}, {"named_per_step_s", c.named_per_step_s},
                  {"attributed_fraction", c.attributed()}, {"measured_by_category_s", c.measured_per_step_s},
                  {"simulated", {{"step_time_s", c.simulated_step_s}, {"compute_s", c.simulated_compute_s},
                                 {"exposed_communication_s", c.simulated_exposed_comm_s},
                                 {"optimizer_s", c.simulated_optimizer_s}}},
                  {"ops", ops}, {"largest_unnamed", unnamed}});
        out = j.dump(2) + "\n";
    } else {
        out += fmt::format("podsim profile compare: {} against {} ({}, {} step{}, {} events)\n", s.name,
                           f.positional[2], t.format, t.steps, t.steps > 1 ? "s" : "", t.events.size());
        out += fmt::format("  measured {} of device work a step; {:.1f}% of it in events named as podsim's ops\n",
                           elapsed(c.measured_step_s), 100 * c.attributed());
        out += fmt::format("  simulated step {} (compute {}, exposed communication {}, optimizer {})\n",
                           elapsed(c.simulated_step_s), elapsed(c.simulated_compute_s),
                           elapsed(c.simulated_exposed_comm_s), elapsed(c.simulated_optimizer_s));
        out += "  measured by category, a step:";
        for (const auto& [k, v] : c.measured_per_step_s) out += fmt::format("  {} {}", k, elapsed(v));
        out += fmt::format("\n\n  {:<28} {:>12} {:>12} {:>8} {:>7}\n", "op (one layer, one micro-batch)", "measured ms",
                           "simulated ms", "error", "events");
        for (const auto& o : c.ops)
            out += o.events ? fmt::format("  {:<28} {:>12.3f} {:>12.3f} {:>7.1f}% {:>7}\n", o.op, o.measured_s * 1e3,
                                          o.simulated_s * 1e3, o.error_pct(), o.events)
                            : fmt::format("  {:<28} {:>12} {:>12.3f} {:>8} {:>7}\n", o.op, "-", o.simulated_s * 1e3,
                                          "-", 0);
        if (!c.largest_unnamed.empty()) {
            out += "\n  largest events not named as podsim ops (a step):\n";
            for (const auto& [n, d] : c.largest_unnamed) out += fmt::format("    {:<60} {}\n", n.substr(0, 60), elapsed(d));
        }
    }
    emit(out, f.out);
    return 0;
}

}  // namespace

int cmd_profile(const Args& args) {
    const CommonFlags f = parse_flags(args, "profile", {"--steps"});
    if (f.positional.empty() || (f.positional[0] != "record" && f.positional[0] != "compare"))
        throw UsageError("profile: expected record or compare (see podsim profile --help)");
    return f.positional[0] == "record" ? record(f) : compare(f);
}

}  // namespace podsim
