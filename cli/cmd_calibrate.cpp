// podsim calibrate: runs the plan's real step kernels on this machine at the exact per-device shard shapes, with
// the token dimension shrunk to fit the time budget, and writes what they achieved (FLOP/s, bytes/s, spread) as a
// profile. The efficiency model fitted from such profiles, and the CUDA runner, are the rest of issue #4.
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <fmt/format.h>
#include <map>

#include "cli/commands.hpp"
#include "hardware/calibration/cpu_kernels.hpp"
#include "hardware/calibration/gpu_kernels.hpp"
#include "hardware/catalog.hpp"
#include "models/kernel_calibration.hpp"
#include "models/scenario.hpp"
#include "models/trace_calibration.hpp"
#include "reports/format.hpp"

namespace podsim {

namespace {
// The process's peak resident memory so far (what the calibration cost the machine), from getrusage.
double peak_rss_bytes() {
    struct rusage u {};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_maxrss) * 1024;  // kilobytes on Linux
}

std::string utc_now() {
    char date[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    return date;
}

// calibrate --from-trace: the profile of what the scenario's step took in a measured trace, op by op where the
// trace names podsim's ops, per kind of kernel where it has only vendor kernel names.
int from_trace(const CommonFlags& f, const std::string& trace_file) {
    if (f.positional.size() != 1 || f.out.empty())
        throw UsageError("calibrate: expected SCENARIO.json --from-trace TRACE.json --out PROFILE.json");
    for (const char* flag : {"--device", "--budget-s"})
        if (f.values.count(flag))
            throw UsageError(std::string("calibrate: ") + flag + " times kernels on this machine; --from-trace reads "
                             "what a trace measured instead, so the two do not combine");
    const Catalog cat = Catalog::load(default_catalog_dir());
    Scenario s = load_scenario(f.positional[0], cat);
    complete_scenario(s);  // the ops and their counts follow the plan the trace ran
    const MeasuredTrace t = read_chrome_trace(load_json_file(trace_file), trace_file);
    const TraceProfile tp = profile_from_trace(t, s.model, s.plan);
    if (tp.measurements.empty() && tp.kind_rates.empty())
        throw InputError(trace_file, "$.traceEvents",
                         "events named as podsim's ops (e.g. \"qkv\", \"mlp.up.wgrad\") or GEMM / attention / "
                         "elementwise device kernels to calibrate from");
    Json profile = {{"schema_version", 1},
                    {"kind", "kernel-calibration"},
                    {"chip", s.system.chip.id},
                    {"device", {{"type", "trace"}, {"name", t.format + " trace " + shareable_path(trace_file)}}},
                    {"scenario", shareable_path(s.file)},
                    {"measured_at", utc_now()},
                    {"trace", {{"file", shareable_path(trace_file)}, {"format", t.format}, {"steps", t.steps},
                               {"events", t.events.size()}, {"measured_step_s", tp.measured_step_s},
                               {"used_step_s", tp.used_step_s}}},
                    {"measurements", tp.measurements},
                    {"kind_rates", tp.kind_rates},
                    {"unmeasured_ops", tp.unmatched}};
    std::string table = fmt::format("podsim calibrate --from-trace: {} ({}, {} step{}, {} events) for {}\n",
                                    shareable_path(trace_file), t.format, t.steps, t.steps > 1 ? "s" : "",
                                    t.events.size(), s.name);
    table += fmt::format("  {} of device work a step; {:.1f}% of it turned into the profile\n",
                         elapsed(tp.measured_step_s),
                         tp.measured_step_s > 0 ? 100 * tp.used_step_s / tp.measured_step_s : 0.0);
    if (!tp.measurements.empty()) {
        table += fmt::format("\n  {:<28} {:<9} {:<11} {:>14} {:>8} {:>12}\n", "op", "pass", "kind",
                             "ms/occurrence", "events", "occurrences");
        for (const auto& m : tp.measurements)
            table += fmt::format("  {:<28} {:<9} {:<11} {:>14.4f} {:>8} {:>12}\n", m["op"].get<std::string>(),
                                 m["pass"].get<std::string>(), m["kind"].get<std::string>(),
                                 m["mean_s"].get<double>() * 1e3, m.value("events", 0),
                                 m.value("occurrences", 1.0));
    }
    for (const auto& [kind, r] : tp.kind_rates.items())
        table += fmt::format("  {}: {} a step in {} -> {:.4g} {}\n", kind, r["work_per_step"].get<double>(),
                             elapsed(r["measured_s_per_step"].get<double>()),
                             r.contains("flops_per_s") ? r["flops_per_s"].get<double>() : r["bytes_per_s"].get<double>(),
                             r.contains("flops_per_s") ? "FLOP/s" : "bytes/s");
    if (!tp.unmatched.empty())
        table += fmt::format("  {} ops podsim prices were not in the trace; they keep the catalog's efficiency model\n",
                             tp.unmatched.size());
    emit(table, "");
    emit(profile.dump(1) + "\n", f.out);
    return 0;
}
}  // namespace

int cmd_calibrate(const Args& args) {
    const CommonFlags f = parse_flags(args, "calibrate", {"--device", "--budget-s", "--from-trace"});
    if (f.values.count("--from-trace")) return from_trace(f, f.value("--from-trace", ""));
    const std::string out = f.out, device = f.value("--device", "cpu");
    const Args& rest = f.positional;
    // A bound on the whole measurement, so at least a second (the rate probes and one warm-up and repetition of
    // each small kernel) and at most a day.
    const double budget_s = number_flag(f, "calibrate", "--budget-s", 60, 1, 86'400);
    if (rest.size() != 1 || out.empty()) throw UsageError("calibrate: expected SCENARIO.json --out PROFILE.json");
    if (device != "cpu" && device != "cuda")
        throw UsageError("calibrate: --device expects cpu or cuda, got \"" + device + "\"");
    std::string why;
    if (device == "cuda" && !calib::gpu::available(&why)) throw UsageError("calibrate: --device cuda: " + why);

    const Catalog cat = Catalog::load(default_catalog_dir());
    Scenario s = load_scenario(rest[0], cat);
    complete_scenario(s);  // the shapes to time follow the plan: a partial one is completed first
    std::string table = fmt::format("{:<28} {:<9} {:<11} {:>22} {:>9} {:>10} {:>8}\n", "op", "pass", "kind", "shape",
                                    "median_ms", "GFLOP/s", "spread%");
    const bool cuda = device == "cuda";
    CalibrationSummary sum;
    const Json ms = calibrate_kernels(s.model, s.plan, budget_s, table,
                                      cuda ? CalibrationDevice::cuda : CalibrationDevice::cpu, &sum);
    const auto host = calib::host_info();
    Json profile = {{"schema_version", 1},
                    {"kind", "kernel-calibration"},
                    {"chip", cuda ? s.system.chip.id : std::string("host-cpu")},
                    {"device", cuda ? Json{{"type", "cuda"}, {"name", calib::gpu::device_name()}}
                                    : Json{{"type", "cpu"}, {"name", host.cpu_model}, {"logical_cpus", host.logical_cpus}}},
                    {"libraries", cuda ? Json{{"cuda", calib::gpu::library_versions()}}
                                       : Json{{"blas", host.blas}, {"blas_threads", host.blas_threads}}},
                    {"precision", std::string("fp32 throughout (the plan asks for ") + to_string(s.plan.precision) +
                                      "; Debian's OpenBLAS has no bf16 GEMM)"},
                    {"scenario", s.file},
                    {"budget_s", budget_s},
                    {"elapsed_s", sum.elapsed_s},
                    {"memory_limit_bytes_per_kernel", sum.memory_limit_bytes},
                    {"largest_kernel_bytes", sum.largest_kernel_bytes},
                    {"peak_rss_bytes", peak_rss_bytes()},
                    {"measured_at", utc_now()},
                    {"measurements", ms},
                    {"skipped", sum.skipped}};
    if (!sum.overrun_cause.empty())
        profile["overrun"] = {{"seconds", sum.elapsed_s - budget_s}, {"cause", sum.overrun_cause}};
    if (ms.empty() && !sum.skipped.empty())
        throw UsageError(fmt::format("calibrate: no kernel fits --budget-s {:g}; the first, {} ({}), {}", budget_s,
                                     sum.skipped[0].value("op", ""), sum.skipped[0].value("pass", ""),
                                     sum.skipped[0].value("reason", "")));
    table += fmt::format("\n{} kernels measured, {} skipped{}; largest {:.0f} MiB of operands (limit {:.0f} MiB per kernel)\n",
                         sum.measured, sum.skipped.size(),
                         sum.skipped.empty() ? "" : " (over the budget: the profile's \"skipped\" says why)",
                         sum.largest_kernel_bytes / (1 << 20), sum.memory_limit_bytes / (1 << 20));
    table += sum.overrun_cause.empty()
                 ? fmt::format("took {:.2f} s of the {:g} s budget\n", sum.elapsed_s, budget_s)
                 : fmt::format("took {:.2f} s: {:.2f} s over the {:g} s budget, because {}\n", sum.elapsed_s,
                               sum.elapsed_s - budget_s, budget_s, sum.overrun_cause);
    emit(table, "");
    emit(profile.dump(1) + "\n", out);
    return 0;
}

}  // namespace podsim
