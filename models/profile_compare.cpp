#include "models/profile_compare.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "models/layer_ops.hpp"

namespace podsim {

namespace {

std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}
bool has(const std::string& s, const char* w) { return s.find(w) != std::string::npos; }

// A device kernel's category from its name (cuBLAS/CUTLASS GEMMs, flash/fused attention, NCCL, copies; XLA's
// fusion names on TPU), for traces whose events are not named as podsim's ops.
std::string classify(const std::string& name) {
    const std::string n = lower(name);
    if (has(n, "nccl") || has(n, "all-reduce") || has(n, "allreduce") || has(n, "all_reduce") || has(n, "all-gather") ||
        has(n, "allgather") || has(n, "reduce-scatter") || has(n, "reducescatter") || has(n, "all-to-all") ||
        has(n, "alltoall") || has(n, "collective") || has(n, "send") || has(n, "recv"))
        return "communication";
    if (has(n, "memcpy") || has(n, "memset") || has(n, "copy-start") || has(n, "infeed") || has(n, "outfeed"))
        return "memory";
    if (has(n, "flash") || has(n, "fmha") || has(n, "attention") || has(n, "attn") || has(n, "softmax"))
        return "attention";
    // (Cijk_...: Tensile's GEMM kernels, as rocBLAS and hipBLASLt name them on AMD GPUs: C[i,j,k] = A x B.)
    if (has(n, "gemm") || has(n, "matmul") || has(n, "cutlass") || has(n, "xmma") || has(n, "cublas") ||
        n.rfind("cijk_", 0) == 0 ||
        has(n, "convolution") || has(n, "dot") || has(n, "sm90") || has(n, "sm80") || has(n, "wgmma"))
        return "matmul";
    if (has(n, "adam") || has(n, "optimizer") || has(n, "multi_tensor")) return "optimizer";
    if (has(n, "elementwise") || has(n, "vectorized") || has(n, "norm") || has(n, "gelu") || has(n, "silu") ||
        has(n, "fusion") || has(n, "reduce") || has(n, "add") || has(n, "mul") || has(n, "cast"))
        return "elementwise";
    return "other";
}

bool annotation(const std::string& name, const std::string& cat) {
    return name.rfind("ProfilerStep#", 0) == 0 || cat == "user_annotation" || cat == "python_function" ||
           cat == "gpu_user_annotation" || cat == "step";
}

}  // namespace

MeasuredTrace read_chrome_trace(const Json& j, const std::string& file) {
    const Json* events = &j;
    if (j.is_object()) {
        if (!j.contains("traceEvents") || !j["traceEvents"].is_array())
            throw InputError(file, "$.traceEvents", "an array of trace events (Chrome trace-event format)");
        events = &j["traceEvents"];
    } else if (!j.is_array()) {
        throw InputError(file, "$", "a Chrome trace: an object with traceEvents, or an array of events");
    }
    MeasuredTrace t;
    // Kineto traces hold host-side ops and device kernels: the device's work is the kernels.
    bool kernels = false;
    for (const auto& e : *events)
        if (e.is_object() && e.value("ph", "") == "X" && e.value("cat", "") == "kernel") kernels = true;
    t.format = kernels ? "kineto (device kernels)" : "chrome trace events";
    // Steps: the distinct ProfilerStep#N annotations (Kineto writes each on the host and again on the device) that
    // launched device work; the profiler's last mark is often a step it stopped in, with nothing launched.
    struct Window {
        double begin_us, end_us;
    };
    std::map<std::string, std::vector<Window>> step_windows;
    std::vector<double> launches_us;
    int step_marks = 0;
    for (size_t i = 0; i < events->size(); ++i) {
        const Json& e = (*events)[i];
        const std::string at = "$.traceEvents[" + std::to_string(i) + "]";
        if (!e.is_object()) throw InputError(file, at, "a trace event object");
        if (e.value("ph", "") != "X") continue;
        if (!e.contains("name") || !e["name"].is_string()) throw InputError(file, at + ".name", "the event's name");
        if (!e.contains("dur") || !e["dur"].is_number() || e["dur"].get<double>() < 0)
            throw InputError(file, at + ".dur", "a duration in microseconds, >= 0");
        const std::string name = e["name"], cat = e.value("cat", "");
        const double ts_us = e.contains("ts") && e["ts"].is_number() ? e["ts"].get<double>() : 0;
        if (name.rfind("ProfilerStep#", 0) == 0 && cat != "gpu_user_annotation")
            step_windows[name].push_back({ts_us, ts_us + e["dur"].get<double>()});
        if (cat == "cuda_runtime" || cat == "cuda_driver") launches_us.push_back(ts_us);
        if (annotation(name, cat)) continue;
        if (kernels && cat != "kernel" && cat != "gpu_memcpy" && cat != "gpu_memset") continue;
        MeasuredEvent m;
        m.name = name;
        m.dur_s = e["dur"].get<double>() * 1e-6;
        static const std::set<std::string> own = {"matmul", "attention", "elementwise", "optimizer", "communication"};
        m.category = own.count(cat) ? cat : classify(name);
        t.events.push_back(std::move(m));
    }
    for (const auto& named : step_windows) {
        const std::vector<Window>& windows = named.second;  // (clang 14: no capture of a structured binding)
        const bool launched = std::any_of(launches_us.begin(), launches_us.end(), [&](double ts) {
            return std::any_of(windows.begin(), windows.end(),
                               [&](const Window& w) { return ts >= w.begin_us && ts <= w.end_us; });
        });
        if (launches_us.empty() || launched) ++step_marks;
    }
    if (step_marks > 0) t.steps = step_marks;
    else if (j.is_object() && j.contains("otherData") && j["otherData"].contains("steps") &&
             j["otherData"]["steps"].is_number_integer() && j["otherData"]["steps"].get<int>() > 0)
        t.steps = j["otherData"]["steps"].get<int>();
    if (t.events.empty()) throw InputError(file, "$.traceEvents", "complete (\"ph\": \"X\") device events to compare");
    return t;
}

ProfileComparison compare_profile(const MeasuredTrace& t, const StepResult& sim, const ModelSpec& m,
                                  const ParallelPlan& p) {
    ProfileComparison c;
    c.steps = t.steps;
    // podsim's names: one layer's ops (forward, backward), and the per-step ops outside the layers.
    std::map<std::string, double> simulated;
    for (const auto* pass : {&sim.layer_forward, &sim.layer_backward})
        for (const auto& o : *pass)
            if (o.name.find("(per chunk)") == std::string::npos) simulated[o.name] += o.time_s;
    std::set<std::string> step_ops = {"optimizer", "adamw"};
    for (const LayerOps& l : {head_ops(m, p), embedding_ops(m, p)})
        for (const auto* pass : {&l.forward, &l.backward})
            for (const auto& o : *pass)
                if (o.kind != OpKind::collective) step_ops.insert(o.name);
    std::map<std::string, std::pair<double, size_t>> measured;
    std::map<std::string, double> unnamed;
    for (const auto& e : t.events) {
        c.measured_per_step_s[e.category] += e.dur_s / t.steps;
        c.measured_step_s += e.dur_s / t.steps;
        const bool named = simulated.count(e.name) || step_ops.count(e.name);
        if (named) {
            c.named_per_step_s += e.dur_s / t.steps;
            auto& x = measured[e.name];
            x.first += e.dur_s, ++x.second;
        } else {
            unnamed[e.name] += e.dur_s / t.steps;
        }
    }
    const double per = static_cast<double>(t.steps) * static_cast<double>(std::max<long long>(1, p.micro_batches())) *
                       (m.layers / std::max(1, p.pp));
    for (const auto* pass : {&sim.layer_forward, &sim.layer_backward})
        for (const auto& o : *pass) {
            if (o.name.find("(per chunk)") != std::string::npos) continue;
            OpComparison oc;
            oc.op = o.name;
            oc.simulated_s = o.time_s;
            if (const auto it = measured.find(o.name); it != measured.end())
                oc.measured_s = it->second.first / per, oc.events = it->second.second;
            c.ops.push_back(oc);
        }
    std::vector<std::pair<std::string, double>> u(unnamed.begin(), unnamed.end());
    std::sort(u.begin(), u.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    if (u.size() > 8) u.resize(8);
    c.largest_unnamed = u;
    c.simulated_step_s = sim.step_time_s;
    c.simulated_compute_s = sim.breakdown.compute_s;
    c.simulated_optimizer_s = sim.breakdown.optimizer_s;
    c.simulated_exposed_comm_s = sim.breakdown.exposed_comm_s;
    return c;
}

}  // namespace podsim
