#include "models/trace_calibration.hpp"

#include <algorithm>
#include <map>

#include "models/layer_ops.hpp"

namespace podsim {

namespace {

const char* kind_of(const Op& o) {
    if (in_attention_core(o)) return "attention";
    return o.kind == OpKind::matmul ? "matmul" : "elementwise";
}

// An op the device runs, how often a step, and its size at this plan.
struct Priced {
    const Op* op;
    std::string pass;   // "forward" / "backward", as profiles key ops
    double per_step = 0;  // occurrences a step on this device
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

TraceProfile profile_from_trace(const MeasuredTrace& t, const ModelSpec& m, const ParallelPlan& p) {
    TraceProfile out;
    const bool moe = m.moe.experts > 0;
    const LayerOps L = layer_ops(m, p, moe), H = head_ops(m, p), E = embedding_ops(m, p);
    const double mbs = double(std::max<long long>(1, p.micro_batches()));
    // Every layer of this device's stage runs each layer op once per micro-batch (recomputed ops once more); the
    // logits and embedding run once per micro-batch on the stage that holds them.
    const double layers = double(m.layers) / std::max(1, p.pp);
    std::map<std::pair<std::string, std::string>, Priced> ops;  // by (name, pass): the first op of that name
    auto add = [&](const std::vector<Op>& list, double per_step) {
        for (const auto& o : list) {
            if (o.kind == OpKind::collective) continue;
            const std::string pass = is_backward(o) ? "backward" : "forward";
            auto [it, fresh] = ops.try_emplace({o.name, pass}, Priced{&o, pass, 0});
            it->second.per_step += per_step;
        }
    };
    add(L.forward, layers * mbs), add(L.backward, layers * mbs), add(L.recompute, layers * mbs);
    add(H.forward, mbs), add(H.backward, mbs), add(E.forward, mbs), add(E.backward, mbs);

    // The trace's events by name, in the order they ran.
    std::map<std::string, std::vector<double>> by_name;
    std::map<std::string, double> unnamed_by_category;
    bool any_named = false;
    for (const auto& e : t.events) {
        out.measured_step_s += e.dur_s / t.steps;
        const bool named = e.name == "optimizer" || e.name == "adamw" || ops.count({e.name, "forward"}) ||
                           ops.count({e.name, "backward"});
        if (named) by_name[e.name].push_back(e.dur_s), any_named = true;
        else unnamed_by_category[e.category] += e.dur_s / t.steps;
    }

    // Named ops: a measurement each; its time per occurrence is the events' total over the occurrences (an op may
    // be several events, one per head say). Where the events split evenly, consecutive groups give the spread.
    for (const auto& [key, pr] : ops) {
        const auto it = by_name.find(key.first);
        if (it == by_name.end()) {
            out.unmatched.push_back(key.first + " (" + key.second + ")");
            continue;
        }
        // A name both passes use (none in podsim's op lists today) would be split by occurrences.
        const std::vector<double>& ev = it->second;
        const double occurrences = pr.per_step * t.steps;
        double total = 0;
        for (double d : ev) total += d;
        const auto other = ops.find({key.first, key.second == "forward" ? "backward" : "forward"});
        if (other != ops.end()) total *= pr.per_step / (pr.per_step + other->second.per_step);
        std::vector<double> per;
        const auto n = static_cast<size_t>(occurrences);
        if (other == ops.end() && n > 0 && double(n) == occurrences && ev.size() % n == 0) {
            const size_t g = ev.size() / n;
            for (size_t i = 0; i < n; ++i) {
                double s = 0;
                for (size_t k = 0; k < g; ++k) s += ev[i * g + k];
                per.push_back(s);
            }
        }
        const double mean = total / occurrences;
        const Op& o = *pr.op;
        Json mj = {{"op", key.first}, {"pass", key.second}, {"kind", kind_of(o)}, {"token_shrink", 1.0},
                   {"plan_flops", o.flops}, {"plan_bytes", o.bytes},
                   {"plan_min_dim", o.kind == OpKind::matmul ? std::min({o.m, o.n, o.k}) : 0.0},
                   {"mean_s", mean},
                   {"median_s", per.empty() ? mean : median(per)},
                   {"min_s", per.empty() ? mean : *std::min_element(per.begin(), per.end())},
                   {"max_s", per.empty() ? mean : *std::max_element(per.begin(), per.end())},
                   {"events", ev.size()}, {"occurrences", occurrences}, {"source", "trace"}};
        out.measurements.push_back(mj);
        out.used_step_s += total / t.steps;
    }

    // The optimizer: one update of this device's parameter shard a step (ZeRO shards it over data parallelism).
    const double shard = m.total_params() / (double(p.tp) * std::max(1, p.pp)) / (p.zero >= 1 ? p.dp : 1);
    double opt_s = 0;
    for (const char* n : {"optimizer", "adamw"})
        if (by_name.count(n))
            for (double d : by_name[n]) opt_s += d;
    if (opt_s == 0 && !any_named && unnamed_by_category.count("optimizer"))
        opt_s = unnamed_by_category["optimizer"] * t.steps;
    if (opt_s > 0) {
        const double per_step = opt_s / t.steps;
        out.measurements.push_back({{"op", "adamw"}, {"pass", "optimizer"}, {"kind", "optimizer"},
                                    {"token_shrink", 1.0}, {"plan_bytes", shard * 28}, {"params", shard},
                                    {"mean_s", per_step}, {"median_s", per_step}, {"min_s", per_step}, {"events", by_name.count("optimizer") ? by_name["optimizer"].size() : size_t{0}},
                                    {"max_s", per_step}, {"source", "trace"}});
        out.used_step_s += per_step;
    }

    // Vendor kernels only: a rate per kind, the step's work of that kind over the trace's time in it.
    if (!any_named) {
        double gemm_flops = 0, att_flops = 0, elem_bytes = 0;
        for (const auto& [key, pr] : ops) {
            const Op& o = *pr.op;
            if (in_attention_core(o)) att_flops += o.flops * pr.per_step;
            else if (o.kind == OpKind::matmul) gemm_flops += o.flops * pr.per_step;
            else elem_bytes += o.bytes * pr.per_step;
        }
        auto rate = [&](const char* kind, const char* unit, double work) {
            const auto it = unnamed_by_category.find(kind);
            if (it == unnamed_by_category.end() || it->second <= 0 || work <= 0) return;
            out.kind_rates[kind] = {{unit, work / it->second}, {"work_per_step", work},
                                    {"measured_s_per_step", it->second}};
            out.used_step_s += it->second;
        };
        rate("matmul", "flops_per_s", gemm_flops);
        rate("attention", "flops_per_s", att_flops);
        rate("elementwise", "bytes_per_s", elem_bytes);
    }
    return out;
}

}  // namespace podsim
