#include "planner/goodput.hpp"

#include <algorithm>
#include <cmath>

#include "hardware/chip.hpp"
#include "hardware/json_reader.hpp"
#include "planner/train_time.hpp"

namespace podsim {

ReliabilityInputs load_reliability(const std::string& dir) {
    const std::string file = dir + "/reliability.json";
    Json j = load_json_file(file);
    JsonObject o(j, file, "$");
    o.only_keys({"schema_version", "unexpected_interruptions_per_chip_hour", "restart_overhead_s",
                 "spot_preemptions_per_node_hour", "checkpoint_bandwidth_fraction", "notes", "sources"});
    require_sources(o);
    ReliabilityInputs r;
    r.file = file;
    r.interruptions_per_chip_hour = o.positive("unexpected_interruptions_per_chip_hour");
    r.restart_overhead_s = o.non_negative("restart_overhead_s");
    r.spot_preemptions_per_node_hour = o.non_negative("spot_preemptions_per_node_hour");
    r.checkpoint_bandwidth_fraction = o.positive("checkpoint_bandwidth_fraction");
    return r;
}

ReliabilityInputs with_overrides(const ReliabilityInputs& catalog, const ReliabilityOverrides& o) {
    if (!o.any()) return catalog;
    ReliabilityInputs r = catalog;
    r.interruptions_per_chip_hour = o.interruptions_per_chip_hour.value_or(r.interruptions_per_chip_hour);
    r.restart_overhead_s = o.restart_overhead_s.value_or(r.restart_overhead_s);
    r.spot_preemptions_per_node_hour = o.spot_preemptions_per_node_hour.value_or(r.spot_preemptions_per_node_hour);
    r.checkpoint_bandwidth_fraction = o.checkpoint_bandwidth_fraction.value_or(r.checkpoint_bandwidth_fraction);
    r.file = "the scenario's reliability block (" + o.source + "), the rest from " + catalog.file;
    return r;
}

Goodput goodput_model(const ModelSpec& m, const SystemSpec& sys, const StepResult& step, double token_budget,
                      const ReliabilityInputs& rel, double extra_per_hour) {
    Goodput g;
    if (!step.feasible || step.tokens_per_s <= 0) return g;
    // A full checkpoint: 16-bit weights, fp32 master weights and both Adam moments.
    g.checkpoint_bytes = m.total_params() * (2 + 4 + 4 + 4);
    const int hosts = sys.hosts();
    const double host_bw = sys.is_gpu ? sys.node.host_network_bytes_per_s
                                      : sys.chip.tpu->dcn_bytes_per_s_per_chip * sys.chip.tpu->chips_per_host;
    g.checkpoint_write_s = g.checkpoint_bytes / (hosts * host_bw * rel.checkpoint_bandwidth_fraction);
    const double per_hour = sys.chips * rel.interruptions_per_chip_hour + extra_per_hour;
    g.mtbf_s = 3600 / per_hour;
    // Young's first-order optimum; past the MTBF it stops being meaningful (Daly 2006), so cap it there.
    g.interval_s = std::min(std::sqrt(2 * g.checkpoint_write_s * g.mtbf_s), g.mtbf_s);
    // Per unit of useful work: checkpoint writes, and per failure half an interval of lost work plus the restart
    // and the restore (read back at the write rate).
    const double waste = g.checkpoint_write_s / g.interval_s +
                         (g.interval_s / 2 + rel.restart_overhead_s + g.checkpoint_write_s) / g.mtbf_s;
    g.goodput = 1 / (1 + waste);
    g.effective_time_s = train_time(token_budget, step).total_s / g.goodput;  // evaluation passes are work too
    return g;
}

}  // namespace podsim
