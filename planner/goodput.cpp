#include "planner/goodput.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "hardware/chip.hpp"
#include "hardware/json_reader.hpp"
#include "planner/train_time.hpp"

namespace podsim {

ReliabilityInputs load_reliability(const std::string& dir) {
    const std::string file = dir + "/reliability.json";
    Json j = load_json_file(file);
    JsonObject o(j, file, "$");
    o.only_keys({"schema_version", "unexpected_interruptions_per_chip_hour", "restart_overhead_s",
                 "spot_preemptions_per_node_hour", "checkpoint_bandwidth_fraction", "replacement_wait_s",
                 "spare_fraction", "notes", "sources"});
    require_sources(o);
    ReliabilityInputs r;
    r.file = file;
    r.interruptions_per_chip_hour = o.positive("unexpected_interruptions_per_chip_hour");
    r.restart_overhead_s = o.non_negative("restart_overhead_s");
    r.spot_preemptions_per_node_hour = o.non_negative("spot_preemptions_per_node_hour");
    r.checkpoint_bandwidth_fraction = o.positive("checkpoint_bandwidth_fraction");
    r.replacement_wait_s = o.non_negative("replacement_wait_s");
    r.spare_fraction = o.number_in("spare_fraction", 0, 1);
    return r;
}

ReliabilityInputs with_overrides(const ReliabilityInputs& catalog, const ReliabilityOverrides& o) {
    if (!o.any()) return catalog;
    ReliabilityInputs r = catalog;
    r.interruptions_per_chip_hour = o.interruptions_per_chip_hour.value_or(r.interruptions_per_chip_hour);
    r.restart_overhead_s = o.restart_overhead_s.value_or(r.restart_overhead_s);
    r.spot_preemptions_per_node_hour = o.spot_preemptions_per_node_hour.value_or(r.spot_preemptions_per_node_hour);
    r.checkpoint_bandwidth_fraction = o.checkpoint_bandwidth_fraction.value_or(r.checkpoint_bandwidth_fraction);
    if (o.checkpoint) r.checkpoint = o.checkpoint;
    r.file = "the scenario's reliability block (" + o.source + "), the rest from " + catalog.file;
    return r;
}

namespace {

// Young's first-order optimum checkpoint interval for a pause of `pause_s` per checkpoint; past the MTBF it stops
// being meaningful (Daly 2006), so capped there.
double young_daly_interval_s(double pause_s, double mtbf_s) { return std::min(std::sqrt(2 * pause_s * mtbf_s), mtbf_s); }

// Useful fraction of wall time: per unit of work, the checkpoint pauses, and per failure the work lost and the time
// the job is down.
double goodput_fraction(double pause_s, double interval_s, double lost_s, double down_s, double mtbf_s) {
    return 1 / (1 + pause_s / interval_s + (lost_s + down_s) / mtbf_s);
}

}  // namespace

Goodput goodput_model(const ModelSpec& m, const SystemSpec& sys, const StepResult& step, double token_budget,
                      const ReliabilityInputs& rel, double extra_per_hour) {
    Goodput g;
    if (!step.feasible || step.tokens_per_s <= 0) return g;
    // A full checkpoint: 16-bit weights, fp32 master weights and both Adam moments.
    g.checkpoint_bytes = m.total_params() * (2 + 4 + 4 + 4);
    const int hosts = sys.hosts();
    const double host_bw = sys.host_network_bytes_per_s();
    if (rel.checkpoint) {
        // A named storage: its published caps for the job's hosts (each also through its general NIC).
        const CheckpointSpec& c = *rel.checkpoint;
        const StorageRate w = storage_rate(c.storage, true, hosts, host_bw, c.capacity_tib);
        const StorageRate rd = storage_rate(c.storage, false, hosts, host_bw, c.capacity_tib);
        g.checkpoint_write_s = g.checkpoint_bytes / w.bytes_per_s;
        g.restore_s = g.checkpoint_bytes / rd.bytes_per_s;
        g.checkpoint_storage = c.storage.name + " (writes: " + w.binding + "; reads: " + rd.binding + ")";
        g.async = c.async;
        // Asynchronous: training stops only while each chip copies its shard to host memory (all at once).
        g.checkpoint_blocking_s =
            c.async ? g.checkpoint_bytes / sys.chips / c.device_to_host_bytes_per_s : g.checkpoint_write_s;
    } else {
        g.checkpoint_write_s = g.checkpoint_bytes / (hosts * host_bw * rel.checkpoint_bandwidth_fraction);
        g.restore_s = g.checkpoint_write_s;  // read back at the write rate
        g.checkpoint_blocking_s = g.checkpoint_write_s;
        g.checkpoint_storage = "each host's general NIC x " + std::to_string(rel.checkpoint_bandwidth_fraction).substr(0, 4) +
                               " (no storage named)";
    }
    const double per_hour = sys.chips * rel.interruptions_per_chip_hour + extra_per_hour;
    g.mtbf_s = 3600 / per_hour;
    // Young/Daly on the time a checkpoint costs the job. An asynchronous checkpoint cannot start before the previous
    // one has drained.
    g.interval_s = young_daly_interval_s(g.checkpoint_blocking_s, g.mtbf_s);
    if (g.async) g.interval_s = std::max(g.interval_s, g.checkpoint_write_s);
    // Per failure: the work since the last complete checkpoint (half an interval; an asynchronous one completes a
    // drain later), the restart and the restore.
    const double lost = g.interval_s / 2 + (g.async ? g.checkpoint_write_s : 0);
    g.goodput = goodput_fraction(g.checkpoint_blocking_s, g.interval_s, lost, rel.restart_overhead_s + g.restore_s,
                                 g.mtbf_s);
    g.effective_time_s = train_time(token_budget, step).total_s / g.goodput;  // evaluation passes are work too
    return g;
}

std::vector<RecoveryOption> recovery_options(const Goodput& base, const SystemSpec& sys, int dp, double work_s,
                                             const ReliabilityInputs& rel) {
    std::vector<RecoveryOption> out;
    if (base.mtbf_s <= 0) return out;
    const double M = base.mtbf_s;
    const int hosts = sys.hosts();
    const double spares = std::max(1.0, std::ceil(rel.spare_fraction * hosts));
    auto finish = [&](RecoveryOption o) {
        if (o.applicable) {
            o.goodput = goodput_fraction(o.checkpoint_pause_s, o.interval_s, o.lost_work_per_failure_s,
                                         o.downtime_per_failure_s, M);
            o.effective_time_s = work_s / o.goodput;
        }
        out.push_back(o);
    };
    const double lost = base.interval_s / 2 + (base.async ? base.checkpoint_write_s : 0);
    RecoveryOption r;
    r.id = "restart", r.name = "restart from the checkpoint (a replacement within the restart overhead)";
    r.downtime_per_failure_s = rel.restart_overhead_s + base.restore_s;
    r.lost_work_per_failure_s = lost, r.checkpoint_pause_s = base.checkpoint_blocking_s, r.interval_s = base.interval_s;
    finish(r);
    RecoveryOption w = r;
    w.id = "wait", w.name = "restart after waiting for a replacement host";
    w.downtime_per_failure_s += rel.replacement_wait_s;
    finish(w);
    RecoveryOption sp = r;
    sp.id = "spares", sp.name = fmt::format("hot spares ({:.0f} host{} held)", spares, spares > 1 ? "s" : "");
    sp.spare_hosts = spares;
    finish(sp);
    // In-memory replicas: a host's shard of the checkpoint copied to a peer host over the general NIC.
    const double host_bw = sys.host_network_bytes_per_s();
    const double peer_copy_s = base.checkpoint_bytes / hosts / host_bw;
    RecoveryOption im;
    im.id = "in-memory", im.name = "in-memory checkpoint replicas on peer hosts, with spares";
    // With asynchronous checkpoints the job pauses only for the copy to its own host's memory; the replication to
    // the peer drains beside training (and must end before the next one).
    im.checkpoint_pause_s = base.async ? base.checkpoint_blocking_s : peer_copy_s;
    im.interval_s = young_daly_interval_s(im.checkpoint_pause_s, M);
    if (base.async) im.interval_s = std::max(im.interval_s, peer_copy_s);
    im.lost_work_per_failure_s = im.interval_s / 2 + (base.async ? peer_copy_s : 0);
    im.downtime_per_failure_s = rel.restart_overhead_s + peer_copy_s;
    im.spare_hosts = spares;
    finish(im);
    // Elastic: the job goes on without one data-parallel replica until its replacement arrives.
    RecoveryOption el;
    el.id = "elastic", el.name = "elastic: continue without the failed data-parallel replica, in-memory replicas";
    if (dp < 2) {
        el.applicable = false, el.why_not = "the plan has one data-parallel replica: nothing to continue on";
    } else {
        el.checkpoint_pause_s = im.checkpoint_pause_s, el.interval_s = im.interval_s;
        el.lost_work_per_failure_s = im.lost_work_per_failure_s;
        // Reconfiguring and restoring, then the replacement wait at (dp-1)/dp speed: 1/dp of it is lost.
        el.downtime_per_failure_s = rel.restart_overhead_s + peer_copy_s + rel.replacement_wait_s / dp;
    }
    finish(el);
    return out;
}

}  // namespace podsim
