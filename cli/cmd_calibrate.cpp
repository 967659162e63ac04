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

namespace podsim {

namespace {
// The process's peak resident memory so far (what the calibration cost the machine), from getrusage.
double peak_rss_bytes() {
    struct rusage u {};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_maxrss) * 1024;  // kilobytes on Linux
}
}  // namespace

int cmd_calibrate(const Args& args) {
    const CommonFlags f = parse_flags(args, "calibrate", {"--device", "--budget-s"});
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
    char date[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
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
                    {"measured_at", date},
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
