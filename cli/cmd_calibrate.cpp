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
#include "hardware/catalog.hpp"
#include "models/layer_ops.hpp"
#include "models/scenario.hpp"

namespace podsim {

namespace {

// An assumed floor of this host's speed, only to size the shrunk shapes so that the budget holds.
constexpr double kAssumedCpuFlopsPerS = 20e9;
constexpr double kAssumedCpuBytesPerS = 5e9;

struct Planned {
    std::string op, kind, pass;
    long m = 0, n = 0, k = 0;  // GEMM shape after shrinking (m is the token dimension)
    long elements = 0;         // elementwise ops: elements after shrinking
    double flops = 0, bytes = 0;
    double shrink = 1;         // measured tokens / plan tokens
};

}  // namespace

int cmd_calibrate(const Args& args) {
    std::string out, device = "cpu";
    double budget_s = 60;
    Args rest;
    for (size_t i = 0; i < args.size(); ++i) {
        auto value = [&]() -> std::string {
            if (i + 1 >= args.size()) throw UsageError("calibrate: " + args[i] + " needs a value");
            return args[++i];
        };
        if (args[i] == "--out") out = value();
        else if (args[i] == "--device") device = value();
        else if (args[i] == "--budget-s") {
            const std::string v = value();
            try {
                budget_s = std::stod(v);
            } catch (const std::exception&) {
                budget_s = -1;
            }
            if (!(budget_s > 0)) throw UsageError("calibrate: --budget-s expects seconds > 0, got \"" + v + "\"");
        } else if (args[i].rfind("--", 0) == 0) throw UsageError("calibrate: unknown option " + args[i]);
        else rest.push_back(args[i]);
    }
    if (rest.size() != 1 || out.empty()) throw UsageError("calibrate: expected SCENARIO.json --out PROFILE.json");
    if (device == "cuda")
        throw UsageError("calibrate: --device cuda needs a build with nvcc and CUDA; this build has none (CPU only)");
    if (device != "cpu") throw UsageError("calibrate: --device expects cpu or cuda, got \"" + device + "\"");

    const Catalog cat = Catalog::load(default_catalog_dir());
    const Scenario s = load_scenario(rest[0], cat);
    const LayerOps L = layer_ops(s.model, s.plan);
    const LayerOps H = head_ops(s.model, s.plan);

    // Distinct kernels of one layer (forward and backward) and of the logits, each measured once.
    std::vector<std::pair<const char*, const std::vector<Op>*>> passes = {
        {"forward", &L.forward}, {"backward", &L.backward}, {"forward", &H.forward}, {"backward", &H.backward}};
    std::vector<Planned> plan;
    std::map<std::string, bool> seen;
    size_t kernels = 0;
    for (const auto& [pass, ops] : passes)
        for (const auto& o : *ops) kernels += o.kind != OpKind::collective;
    const double per_kernel_s = budget_s / std::max<size_t>(1, kernels + 1);
    const double tokens = double(s.plan.micro_batch) * s.model.seq_len / s.plan.cp;
    for (const auto& [pass, ops] : passes) {
        for (const auto& o : *ops) {
            if (o.kind == OpKind::collective) continue;
            Planned p;
            p.op = o.name, p.pass = pass;
            // One call should take about a fifth of its share of the budget at the assumed speed.
            const double cap_s = per_kernel_s / 5;
            if (o.kind == OpKind::matmul && o.name.rfind("core.", 0) != 0) {
                p.kind = "matmul";
                // The token dimension of a weight GEMM is m (dgrad, forward) or k (wgrad): shrink that one.
                const bool wgrad = o.name.find(".wgrad") != std::string::npos;
                const double tok = wgrad ? o.k : o.m;
                p.shrink = std::clamp(cap_s * kAssumedCpuFlopsPerS / o.flops, 64.0 / tok, 1.0);
                p.m = static_cast<long>(o.m * (wgrad ? 1 : p.shrink)), p.n = static_cast<long>(o.n);
                p.k = static_cast<long>(o.k * (wgrad ? p.shrink : 1));
                p.flops = 2.0 * p.m * p.n * p.k;
                p.bytes = 2.0 * (double(p.m) * p.k + double(p.k) * p.n + double(p.m) * p.n);
            } else if (o.kind == OpKind::attention || o.name.rfind("core.", 0) == 0) {
                if (o.name.find("softmax") != std::string::npos || o.name.find(".bwd") != std::string::npos) continue;
                p.kind = "attention";
                const long heads = s.model.heads / s.plan.tp, seq = s.model.seq_len / s.plan.cp;
                const double full = 4.0 * double(s.plan.micro_batch) * heads * seq * seq * s.model.head_dim;
                p.shrink = std::clamp(cap_s * kAssumedCpuFlopsPerS / full, 1.0 / (s.plan.micro_batch * heads), 1.0);
                p.m = std::max(1L, static_cast<long>(s.plan.micro_batch * heads * p.shrink));  // batch x heads kept
                p.n = seq, p.k = s.model.head_dim;
                p.flops = 4.0 * p.m * p.n * p.n * p.k;
                p.bytes = 4.0 * (4.0 * p.m * p.n * p.k + double(p.m) * p.n * p.n);
            } else {
                p.kind = "elementwise";
                p.shrink = std::clamp(cap_s * kAssumedCpuBytesPerS / std::max(1.0, o.bytes), 64.0 / tokens, 1.0);
                p.elements = std::max(1024L, static_cast<long>(o.bytes / 4 * p.shrink));
                p.bytes = p.elements * 4.0 * 3;  // two reads, one write of fp32 on the CPU
            }
            const std::string key = p.kind + fmt::format(":{}:{}:{}:{}:{}", p.m, p.n, p.k, p.elements, p.op);
            if (seen[key]) continue;
            seen[key] = true;
            plan.push_back(p);
        }
    }

    const auto host = calib::host_info();
    Json ms = Json::array();
    std::string table = fmt::format("{:<28} {:<9} {:<11} {:>22} {:>9} {:>10} {:>8}\n", "op", "pass", "kind", "shape",
                                    "median_ms", "GFLOP/s", "spread%");
    for (const auto& p : plan) {
        calib::Timing t;
        if (p.kind == "matmul") t = calib::gemm(p.m, p.n, p.k, per_kernel_s);
        else if (p.kind == "attention") t = calib::attention(p.m, p.n, p.k, true, per_kernel_s);
        else if (p.op.find("norm") != std::string::npos)
            t = calib::layernorm(std::max<long>(1, static_cast<long>(p.elements / s.model.hidden)), s.model.hidden, per_kernel_s);
        else if (p.op.find("mlp.act") != std::string::npos)
            t = s.model.gated() ? calib::swiglu(p.elements / 2, per_kernel_s) : calib::gelu(p.elements, per_kernel_s);
        else if (p.op.find("cross_entropy") != std::string::npos)
            t = calib::cross_entropy(std::max<long>(1, static_cast<long>(p.elements / (s.model.vocab / s.plan.tp))), s.model.vocab / s.plan.tp,
                                     per_kernel_s);
        else t = calib::stream_add(p.elements, per_kernel_s);
        Json shape = p.kind == "elementwise" ? Json{{"elements", p.elements}} : Json{{"m", p.m}, {"n", p.n}, {"k", p.k}};
        ms.push_back({{"op", p.op}, {"pass", p.pass}, {"kind", p.kind}, {"shape", shape},
                      {"token_shrink", p.shrink}, {"flops", p.flops}, {"bytes", p.bytes},
                      {"median_s", t.median_s}, {"min_s", t.min_s}, {"max_s", t.max_s}, {"reps", t.reps},
                      {"spread_pct", t.spread_pct()},
                      {"flops_per_s", t.median_s > 0 ? p.flops / t.median_s : 0.0},
                      {"bytes_per_s", t.median_s > 0 ? p.bytes / t.median_s : 0.0}});
        table += fmt::format("{:<28} {:<9} {:<11} {:>22} {:>9.3f} {:>10.1f} {:>8.1f}\n", p.op, p.pass, p.kind,
                             p.kind == "elementwise" ? fmt::format("{}", p.elements)
                                                     : fmt::format("{}x{}x{}", p.m, p.n, p.k),
                             t.median_s * 1e3, t.median_s > 0 ? p.flops / t.median_s / 1e9 : 0.0, t.spread_pct());
    }
    // AdamW over this device's parameter shard (shrunk like the rest).
    const double shard = s.model.params_per_layer() / s.plan.tp;
    const long params = static_cast<long>(std::clamp(per_kernel_s / 5 * kAssumedCpuBytesPerS / 28, 1e5, shard));
    const auto ta = calib::adamw(params, per_kernel_s);
    ms.push_back({{"op", "adamw"}, {"pass", "optimizer"}, {"kind", "optimizer"}, {"shape", {{"params", params}}},
                  {"bytes", params * 28.0}, {"median_s", ta.median_s}, {"min_s", ta.min_s}, {"max_s", ta.max_s},
                  {"reps", ta.reps}, {"spread_pct", ta.spread_pct()},
                  {"bytes_per_s", ta.median_s > 0 ? params * 28.0 / ta.median_s : 0.0}});

    char date[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    Json profile = {{"schema_version", 1},
                    {"kind", "kernel-calibration"},
                    {"device", {{"type", "cpu"}, {"name", host.cpu_model}, {"logical_cpus", host.logical_cpus}}},
                    {"libraries", {{"blas", host.blas}, {"blas_threads", host.blas_threads}}},
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
