#include "reports/trace.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace podsim {

namespace {

using nlohmann::json;

// Threads of a stage's process, in display order.
enum Tid { kCompute = 1, kCollectives = 2, kSendFwd = 3, kSendBwd = 4, kDp = 5, kOther = 9 };

int tid_of(const std::string& stream) {
    if (stream == "compute") return kCompute;
    if (stream == "send_fwd") return kSendFwd;
    if (stream == "send_bwd") return kSendBwd;
    if (stream == "dp") return kDp;
    return kOther;
}

const char* thread_name(int tid) {
    switch (tid) {
        case kCompute: return "compute";
        case kCollectives: return "collectives (TP/CP/FSDP/EP)";
        case kSendFwd: return "activation sends";
        case kSendBwd: return "gradient sends";
        case kDp: return "data-parallel gradient sync";
        default: return "other";
    }
}

// The network group a layer collective runs on (NetworkUse::group spells FSDP's as data parallelism's).
std::string network_group(CommGroup g) {
    switch (g) {
        case CommGroup::fsdp: return "dp";
        case CommGroup::etp: return "tp";
        default: return to_string(g);
    }
}

struct ChunkLayers {
    const StepResult& r;
    // First model layer of stage s's chunk c: the layers of every model chunk before it (model chunk c x pp + s).
    int first_layer(int s, int c) const {
        const int mc = c * r.pp + s;
        int n = 0;
        for (int k = 0; k < mc; ++k) n += r.chunk_layers[size_t(k % r.pp) * r.vpp + k / r.pp];
        return n;
    }
    int layers(int s, int c) const { return r.chunk_layers[size_t(s) * r.vpp + c]; }
};

}  // namespace

json perfetto_trace(const StepResult& r, const std::string& title, const std::string& plan, const TraceOptions& o) {
    json events = json::array();
    std::map<int, std::set<int>> threads;  // stage -> tids named
    auto name_thread = [&](int stage, int tid) {
        auto& named = threads[stage];
        if (named.empty()) {
            events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", stage},
                              {"args", {{"name", "pipeline stage " + std::to_string(stage)}}}});
            events.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", stage}, {"args", {{"sort_index", stage}}}});
        }
        if (named.insert(tid).second) {
            events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", stage}, {"tid", tid},
                              {"args", {{"name", thread_name(tid)}}}});
            events.push_back({{"ph", "M"}, {"name", "thread_sort_index"}, {"pid", stage}, {"tid", tid},
                              {"args", {{"sort_index", tid}}}});
        }
    };
    auto slice = [&](int stage, int tid, const std::string& name, const char* cat, double start_s, double dur_s, json args) {
        name_thread(stage, tid);
        events.push_back({{"ph", "X"}, {"name", name}, {"cat", cat}, {"pid", stage}, {"tid", tid},
                          {"ts", start_s * 1e6}, {"dur", std::max(dur_s, 0.0) * 1e6}, {"args", std::move(args)}});
    };

    const ChunkLayers lay{r};
    const bool have_layers = r.chunk_layers.size() == size_t(r.pp) * r.vpp && !r.chunk_layers.empty();
    const int M = static_cast<int>(std::max<long long>(1, r.micro_batches));
    // A pass's first compute span (the receiver of a send starts there) and the pieces a backward was cut into.
    std::map<std::tuple<char, int, int, int>, double> pass_start;
    std::map<std::tuple<char, int, int, int>, int> pieces;
    for (const auto& s : r.timeline)
        if (s.stream == "compute" && s.pass) {
            const auto k = std::make_tuple(s.pass, s.stage, s.chunk, s.micro_batch);
            auto [it, fresh] = pass_start.emplace(k, s.start_s);
            if (!fresh) it->second = std::min(it->second, s.start_s);
            ++pieces[k];
        }
    std::map<std::tuple<char, int, int, int>, int> piece_seen;
    size_t layer_events = 0, kernel_events = 0, collective_events = 0, flows = 0;

    // One layer's ops laid out inside [start, start + dur): kernels on the compute thread, scaled so that they fill
    // the layer's compute share; blocking collectives take the layer's exposed-communication share on the compute
    // stream (drawn on the collectives thread); overlappable ones run beside the kernels that follow them.
    auto draw_ops = [&](int stage, const std::vector<OpTiming>& ops, double start, double compute_s, double exposed_s) {
        double kernels_s = 0, blocking_s = 0;
        for (const auto& op : ops) {
            if (op.name.find("(per chunk)") != std::string::npos) continue;
            if (op.kind != OpKind::collective) kernels_s += op.time_s;
            else if (!op.overlappable) blocking_s += op.time_s;
        }
        if (kernels_s <= 0) return;
        const double ks = compute_s / kernels_s, cs = blocking_s > 0 ? exposed_s / blocking_s : 0;
        double t = start, side_free = start;  // compute cursor; when the collectives thread is free
        for (const auto& op : ops) {
            if (op.name.find("(per chunk)") != std::string::npos) continue;
            if (op.kind != OpKind::collective) {
                slice(stage, kCompute, op.name, to_string(op.kind), t, op.time_s * ks,
                      {{"flops", op.flops}, {"bytes", op.bytes}, {"priced_time_s", op.time_s}});
                t += op.time_s * ks, ++kernel_events;
                continue;
            }
            json args{{"group", to_string(op.group)}, {"collective", to_string(op.comm)}, {"bytes", op.bytes},
                      {"priced_time_s", op.time_s}, {"overlapped", op.overlappable}};
            for (const auto& n : r.networks)
                if (n.group == network_group(op.group))
                    args["group_size"] = n.size, args["algorithm"] = n.algorithm, args["path"] = n.path;
            const double at = std::max(t, side_free);
            if (op.overlappable) {
                slice(stage, kCollectives, op.name, "collective (overlapped)", at, op.time_s, args);
                side_free = at + op.time_s;
            } else {
                const double wait = op.time_s * cs;  // the compute stream waits this long (the exposed share)
                slice(stage, kCollectives, op.name, "collective (blocking)", t, wait, args);
                t += wait;
                side_free = std::max(side_free, t);
            }
            ++collective_events;
        }
    };

    for (const auto& s : r.timeline) {
        const int tid = tid_of(s.stream);
        const double dur = s.finish_s - s.start_s;
        slice(s.stage, tid, s.label, s.stream.c_str(), s.start_s, dur,
              {{"compute_s", s.compute_s}, {"exposed_comm_s", s.exposed_comm_s}, {"optimizer_s", s.optimizer_s},
               {"side_comm_s", s.side_comm_s}});
        // Flow arrows: a send feeds the next stage's forward (the previous stage's backward) of the same micro-batch.
        if ((s.stream == "send_fwd" || s.stream == "send_bwd") && s.pass) {
            const bool fwd = s.pass == 'F';
            const int P = r.pp;
            const int to_stage = fwd ? (s.stage + 1) % P : (s.stage + P - 1) % P;
            const int to_chunk = fwd ? (s.stage + 1 < P ? s.chunk : s.chunk + 1) : (s.stage > 0 ? s.chunk : s.chunk - 1);
            const auto it = pass_start.find(std::make_tuple(s.pass, to_stage, to_chunk, s.micro_batch));
            if (it != pass_start.end()) {
                const json id = ++flows;
                const char* name = fwd ? "activations" : "activation gradients";
                events.push_back({{"ph", "s"}, {"name", name}, {"cat", "pipeline"}, {"id", id}, {"pid", s.stage},
                                  {"tid", tid}, {"ts", s.start_s * 1e6}});
                events.push_back({{"ph", "f"}, {"bp", "e"}, {"name", name}, {"cat", "pipeline"}, {"id", id},
                                  {"pid", to_stage}, {"tid", kCompute}, {"ts", it->second * 1e6}});
            }
        }
        if (!have_layers || s.stream != "compute" || !s.pass || s.chunk < 0 || dur <= 0) continue;
        // Layers of this pass (a last backward cut into gradient-bucket pieces covers its share of them in each).
        const auto key = std::make_tuple(s.pass, s.stage, s.chunk, s.micro_batch);
        const int n_pieces = pieces[key], piece = piece_seen[key]++;
        const int L = lay.layers(s.stage, s.chunk), first = lay.first_layer(s.stage, s.chunk);
        const int lo = L * piece / n_pieces, hi = L * (piece + 1) / n_pieces;
        if (hi <= lo) continue;
        const bool edge_mb = s.micro_batch == 0 || s.micro_batch == M - 1;
        if (!edge_mb && layer_events >= o.max_layer_events) continue;
        const double per = dur / (hi - lo);
        const double compute = s.compute_s / (hi - lo) * (dur / std::max(s.compute_s + s.exposed_comm_s, 1e-30));
        const double exposed = per - compute;
        for (int i = lo; i < hi; ++i) {
            // Forward runs the chunk's layers in order, backward in reverse.
            const int layer = s.pass == 'F' ? first + i : first + (L - 1 - i);
            const double t0 = s.start_s + (i - lo) * per;
            slice(s.stage, kCompute, "layer " + std::to_string(layer) + (s.pass == 'F' ? " forward" : " backward"),
                  "layer", t0, per, {{"layer", layer}, {"micro_batch", s.micro_batch}});
            ++layer_events;
            if (edge_mb) draw_ops(s.stage, s.pass == 'F' ? r.layer_forward : r.layer_backward, t0, compute, exposed);
        }
    }
    return {{"traceEvents", events},
            {"displayTimeUnit", "ms"},
            {"otherData",
             {{"title", title}, {"plan", plan}, {"step_time_s", r.step_time_s}, {"generator", "podsim"},
              {"layer_events", layer_events}, {"kernel_events", kernel_events}, {"collective_events", collective_events},
              {"flow_arrows", flows},
              {"detail", "every task; per-layer events in every pass (up to " + std::to_string(o.max_layer_events) +
                             ", then the first and last micro-batch only); kernels and collectives in the first and "
                             "last micro-batch's layers; a task's time is the engine's, its split into layers and "
                             "kernels follows the priced op times"}}}};
}

}  // namespace podsim
