#include "planner/goodput.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "hardware/chip.hpp"
#include "hardware/json_reader.hpp"
#include "planner/train_time.hpp"

namespace podsim {

const char* to_string(FailureComponent c) {
    switch (c) {
        case FailureComponent::chip: return "chip";
        case FailureComponent::host: return "host";
        case FailureComponent::link: return "link";
        case FailureComponent::slice: return "slice";
        case FailureComponent::software: return "software";
    }
    return "?";
}

namespace {

// The key of a component's rate in reliability.json's "failures" (and a scenario's).
std::string rate_key(FailureComponent c) {
    return c == FailureComponent::software ? "software_per_chip_hour" : std::string(to_string(c)) + "_per_hour";
}

// How many of a component the system has. Links: every backend NIC of a GPU node; one DCN NIC per TPU host.
// Slices: a TPU job's slices; on GPUs the NVLink domains larger than a node (NVL72 racks), else none.
double component_units(const SystemSpec& sys, FailureComponent c) {
    switch (c) {
        case FailureComponent::chip: return sys.chips;
        case FailureComponent::host: return sys.hosts();
        case FailureComponent::link: return sys.is_gpu ? double(sys.nodes) * sys.node.gpu_nics_per_node : sys.hosts();
        case FailureComponent::slice:
            if (!sys.is_gpu) return sys.slices;
            return sys.domain_gpus() > sys.node.gpus_per_node ? double(sys.chips) / sys.domain_gpus() : 0;
        case FailureComponent::software: return sys.chips;
    }
    return 0;
}

}  // namespace

std::vector<JobFailures> job_failures(const SystemSpec& sys, const ReliabilityInputs& rel) {
    std::vector<JobFailures> out;
    for (FailureComponent c : kAllFailureComponents) {
        JobFailures j;
        j.component = c;
        j.units = component_units(sys, c);
        if (rel.flat_per_chip_hour) {
            j.per_unit_hour = c == FailureComponent::chip ? *rel.flat_per_chip_hour : 0;
            j.source = c == FailureComponent::chip ? rel.flat_source + ": one flat rate for every failure"
                                                   : "in the scenario's flat rate";
        } else {
            j.per_unit_hour = rel.failures[static_cast<int>(c)].per_unit_hour;
            j.source = rel.failures[static_cast<int>(c)].source;
        }
        j.per_hour = j.units * j.per_unit_hour;
        out.push_back(std::move(j));
    }
    return out;
}

double job_failures_per_hour(const SystemSpec& sys, const ReliabilityInputs& rel) {
    double sum = 0;
    for (const JobFailures& j : job_failures(sys, rel)) sum += j.per_hour;
    return sum;
}

ReliabilityInputs load_reliability(const std::string& dir) {
    const std::string file = dir + "/reliability.json";
    Json j = load_json_file(file);
    JsonObject o(j, file, "$");
    o.only_keys({"schema_version", "failures", "restart_overhead_s", "spot_preemptions_per_node_hour",
                 "checkpoint_bandwidth_fraction", "replacement_wait_s", "spare_fraction", "notes", "sources"});
    require_sources(o);
    ReliabilityInputs r;
    r.file = file;
    const JsonObject f = o.object("failures");
    f.only_keys({"chip_per_hour", "host_per_hour", "link_per_hour", "slice_per_hour", "software_per_chip_hour"});
    const JsonObject sources = o.object("sources");
    for (FailureComponent c : kAllFailureComponents) {
        const std::string key = rate_key(c);
        r.failures[static_cast<int>(c)] = {f.number_in(key, c == FailureComponent::chip ? 1e-12 : 0, 1),
                                           sources.string("failures." + key)};
    }
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
    const std::string from = "the scenario's reliability block (" + o.source + ")";
    auto rate = [&](FailureComponent c, const std::optional<double>& v) {
        if (v) r.failures[static_cast<int>(c)] = {*v, from};
    };
    rate(FailureComponent::chip, o.chip_per_hour);
    rate(FailureComponent::host, o.host_per_hour);
    rate(FailureComponent::link, o.link_per_hour);
    rate(FailureComponent::slice, o.slice_per_hour);
    rate(FailureComponent::software, o.software_per_chip_hour);
    if (o.interruptions_per_chip_hour) r.flat_per_chip_hour = o.interruptions_per_chip_hour, r.flat_source = from;
    r.restart_overhead_s = o.restart_overhead_s.value_or(r.restart_overhead_s);
    r.spot_preemptions_per_node_hour = o.spot_preemptions_per_node_hour.value_or(r.spot_preemptions_per_node_hour);
    r.checkpoint_bandwidth_fraction = o.checkpoint_bandwidth_fraction.value_or(r.checkpoint_bandwidth_fraction);
    if (o.checkpoint) r.checkpoint = o.checkpoint;
    r.file = from + ", the rest from " + catalog.file;
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
    const double per_hour = job_failures_per_hour(sys, rel) + extra_per_hour;
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

namespace {

// What a spare must be to replace a failed part (see goodput.hpp). TPU v4's optical circuit switches connect 4x4x4
// cubes and are reconfigured around failed machines, chips and links (Jouppi et al. 2023, arXiv:2304.01433 sec. 2;
// Zu et al., "Resiliency at Scale: Managing Google's TPUv4 Machine Learning Supercomputer", NSDI 2024), as on v5p
// and Ironwood (the chips' "cube4" wraparound).
struct SpareUnit {
    double hosts = 1;
    std::string name = "host";
};
SpareUnit spare_unit(const SystemSpec& sys) {
    if (sys.is_gpu) return {};
    const int per_host = sys.chips_per_host();
    if (sys.chip.tpu->wraparound == "cube4" && sys.chips_per_slice() >= 64)
        return {64.0 / per_host, "4x4x4 cube"};
    const double slice_hosts = std::max(1, sys.chips_per_slice() / per_host);
    return {slice_hosts, sys.accelerator_type + " slice"};
}

}  // namespace

std::vector<RecoveryOption> recovery_options(const Goodput& base, const SystemSpec& sys, int dp, double work_s,
                                             const ReliabilityInputs& rel) {
    std::vector<RecoveryOption> out;
    if (base.mtbf_s <= 0) return out;
    const double M = base.mtbf_s;
    const int hosts = sys.hosts();
    const SpareUnit unit = spare_unit(sys);
    // spare_fraction of the job's hosts, in whole replacement units, at least one.
    const double spare_units = std::max(1.0, std::ceil(rel.spare_fraction * hosts / unit.hosts));
    const double spares = spare_units * unit.hosts;
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
    sp.id = "spares";
    sp.name = unit.hosts == 1 ? fmt::format("hot spares ({:.0f} host{} held)", spares, spares > 1 ? "s" : "")
                              : fmt::format("hot spares ({:.0f} {}{} held: {:.0f} hosts)", spare_units, unit.name,
                                            spare_units > 1 ? "s" : "", spares);
    sp.spare_hosts = spares, sp.spare_unit = unit.name;
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
    im.spare_hosts = spares, im.spare_unit = unit.name;
    finish(im);
    // Elastic: the job goes on without the data-parallel replicas a failure takes until their replacement arrives.
    RecoveryOption el;
    el.id = "elastic", el.name = "elastic: continue without the failed data-parallel replicas, in-memory replicas";
    const double chips_per_replica = double(sys.chips) / std::max(1, dp);
    // The chips one failure of each component puts out of service: a GPU's host; a TPU's slice (its torus is broken
    // until the slice is repaired or rebuilt); a slice; none for software (the ranks restart in place).
    auto chips_lost = [&](FailureComponent c) -> double {
        switch (c) {
            case FailureComponent::software: return 0;
            case FailureComponent::slice: return sys.is_gpu ? sys.domain_gpus() : sys.chips_per_slice();
            default: return sys.is_gpu ? sys.chips_per_host() : sys.chips_per_slice();
        }
    };
    double per_hour = 0, wait_share = 0, leaves_some = 0;
    for (const JobFailures& j : job_failures(sys, rel)) {
        if (j.per_hour <= 0) continue;
        const double lost = chips_lost(j.component);
        // Replicas touched (whole ones: a replica with one chip out stops), as a fraction of all.
        const double replicas = lost > 0 ? std::ceil(lost / chips_per_replica - 1e-9) : 0;
        const double fraction = std::min(1.0, replicas / std::max(1, dp));
        per_hour += j.per_hour, wait_share += j.per_hour * fraction;
        if (lost > 0 && fraction < 1) leaves_some += j.per_hour;  // a hardware failure the job outlives
    }
    if (dp < 2) {
        el.applicable = false, el.why_not = "the plan has one data-parallel replica: nothing to continue on";
    } else if (per_hour <= 0 || leaves_some <= 0) {
        el.applicable = false;
        el.why_not = sys.is_gpu ? "every failure takes all data-parallel replicas"
                                : "a chip, host or link failure stops its whole slice, and the job has one slice";
    } else {
        el.checkpoint_pause_s = im.checkpoint_pause_s, el.interval_s = im.interval_s;
        el.lost_work_per_failure_s = im.lost_work_per_failure_s;
        // Reconfiguring and restoring, then the replacement wait at reduced speed: the lost replicas' share of it,
        // averaged over the components' failures.
        el.downtime_per_failure_s = rel.restart_overhead_s + peer_copy_s + rel.replacement_wait_s * wait_share / per_hour;
    }
    finish(el);
    return out;
}

}  // namespace podsim
