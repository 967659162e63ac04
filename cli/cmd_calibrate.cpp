// podsim calibrate: runs the plan's real step kernels on this machine at the exact per-device shard shapes, with
// the token dimension shrunk to fit the time budget, and writes what they achieved (FLOP/s, bytes/s, spread) as a
// profile. The efficiency model fitted from such profiles, and the CUDA runner, are the rest of issue #4.
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

int cmd_calibrate(const Args& args) {
    const CommonFlags f = parse_flags(args, "calibrate", {"--device", "--budget-s"});
    const std::string out = f.out, device = f.value("--device", "cpu");
    const Args& rest = f.positional;
    double budget_s = 60;
    if (!f.value("--budget-s").empty()) {
        const std::string v = f.value("--budget-s");
        try {
            budget_s = std::stod(v);
        } catch (const std::exception&) {
            budget_s = -1;
        }
        if (!(budget_s > 0)) throw UsageError("calibrate: --budget-s expects seconds > 0, got \"" + v + "\"");
    }
    if (rest.size() != 1 || out.empty()) throw UsageError("calibrate: expected SCENARIO.json --out PROFILE.json");
    if (device != "cpu" && device != "cuda")
        throw UsageError("calibrate: --device expects cpu or cuda, got \"" + device + "\"");
    std::string why;
    if (device == "cuda" && !calib::gpu::available(&why)) throw UsageError("calibrate: --device cuda: " + why);

    const Catalog cat = Catalog::load(default_catalog_dir());
    const Scenario s = load_scenario(rest[0], cat);
    std::string table = fmt::format("{:<28} {:<9} {:<11} {:>22} {:>9} {:>10} {:>8}\n", "op", "pass", "kind", "shape",
                                    "median_ms", "GFLOP/s", "spread%");
    const bool cuda = device == "cuda";
    const Json ms = calibrate_kernels(s.model, s.plan, budget_s, table,
                                      cuda ? CalibrationDevice::cuda : CalibrationDevice::cpu);
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
                    {"measured_at", date},
                    {"measurements", ms}};
    emit(table, "");
    emit(profile.dump(1) + "\n", out);
    return 0;
}

}  // namespace podsim
