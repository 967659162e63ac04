#include "reports/plan_report.hpp"

#include <fmt/format.h>

#include "reports/format.hpp"
#include "reports/json_parts.hpp"

namespace podsim {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

// The precision, with the fp8 scaling recipe when it applies ("fp8 (delayed scaling)").
std::string precision_text(const ParallelPlan& p) {
    if (p.precision != Precision::fp8) return to_string(p.precision);
    return fmt::format("{} ({} scaling)", to_string(p.precision), to_string(p.fp8_recipe));
}

std::string plan_line(const ParallelPlan& p) {
    return fmt::format("dp={} tp={} pp={} vpp={} cp={} sp={} zero={} schedule={} micro_batch={} global_batch={} "
                       "precision={} recompute={}{} attention={} tp_overlap={}",
                       p.dp, p.tp, p.pp, p.vpp, p.cp, p.sp ? "on" : "off", p.zero, to_string(p.schedule), p.micro_batch,
                       p.global_batch, precision_text(p), recompute_label(p),
                       p.offload_layers > 0 ? fmt::format(" offload_layers={}", p.offload_layers) : "",
                       to_string(p.attention), to_string(p.tp_comm_overlap));
}

}  // namespace

std::string plan_text(const Scenario& s, const StepResult& r, const CostReport& c) {
    std::string o;
    auto line = [&](const std::string& k, const std::string& v) { o += fmt::format("  {:<28} {}\n", k, v); };
    o += fmt::format("podsim plan: {}\n", s.name);
    if (!s.description.empty()) o += fmt::format("  {}\n", s.description);
    if (!s.plan_choices.empty()) {
        std::string c;
        for (const auto& x : s.plan_choices) c += (c.empty() ? "" : ", ") + x;
        o += fmt::format("  plan completed (fields not given, chosen for the best feasible step time): {}\n", c);
    }
    line("model", fmt::format("{} ({:.1f}B parameters, {} layers, hidden {}, seq {})", s.model.name,
                              s.model.total_params() / 1e9, s.model.layers, s.model.hidden, s.model.seq_len));
    line("system", fmt::format("{} ({} x {})", s.system.label, s.system.chips, s.system.chip.name));
    line("plan", plan_line(s.plan));
    if (!r.feasible) {
        o += "\n  INFEASIBLE:\n";
        for (const auto& why : r.infeasible) o += "    - " + why + "\n";
        if (r.step_time_s <= 0) return o;
        o += "  (simulated anyway, as asked)\n";
    }
    o += "\n";
    line("step time", fmt::format("{:.3f} s  ({} micro-batches per replica)", r.step_time_s, r.micro_batches));
    const auto& b = r.breakdown;
    auto pct = [&](double x) { return fmt::format("{:8.3f} s  {:5.1f}%", x, 100 * x / r.step_time_s); };
    line("  compute", pct(b.compute_s));
    line("  exposed communication", pct(b.exposed_comm_s));
    line("  pipeline bubble", pct(b.bubble_s));
    line("  optimizer", pct(b.optimizer_s));
    if (b.input_wait_s > 0) line("  waiting for input", pct(b.input_wait_s));
    if (r.input) {
        const InputTiming& in = *r.input;
        line("input pipeline",
             fmt::format("{} a step per host ({:.0f} sequences, {:.3g} MB from {}: {}; decode on {} cores: {}); "
                         "bottleneck: {}; {}",
                         elapsed(in.per_step_s), in.samples_per_host, in.bytes_per_host / 1e6, s.data->storage.name,
                         elapsed(in.storage_s), in.cores, elapsed(in.cpu_s), in.bottleneck,
                         b.input_wait_s > 0 ? fmt::format("INPUT-BOUND: the step waits {:.3f} s for it", b.input_wait_s)
                                            : fmt::format("hidden under the step ({:.0f}% of it, prefetch {})",
                                                          100 * in.per_step_s / r.step_time_s, s.data->prefetch_steps)));
    }
    if (r.evaluation) {
        const EvalPass& e = *r.evaluation;
        line("evaluation pass",
             fmt::format("{:.3f} s forward only: {:.4g} tokens, {} sequences in {} batch(es) of {}{} ({} micro-batches "
                         "per replica each), every {} steps",
                         e.pass_s, e.spec.tokens, e.sequences, e.full_batches, e.spec.global_batch_seqs,
                         e.last_batch_seqs > 0 ? fmt::format(" + one of {}", e.last_batch_seqs) : "", e.micro_batches,
                         e.spec.interval_steps));
        line("step time with evaluation", fmt::format("{:.3f} s  (+{:.1f}%: a pass spread over its interval)",
                                                      c.train.step_incl_eval_s,
                                                      100 * (c.train.step_incl_eval_s / r.step_time_s - 1)));
    }
    line("tokens/s", fmt::format("{:.0f}  ({:.0f} per chip)", r.tokens_per_s, r.tokens_per_s / s.system.chips));
    line("MFU", fmt::format("{:.1f}%  (vs {}, {:.0f} TFLOP/s); {:.1f}% with causal attention halved", 100 * r.mfu,
                            r.peak_name, r.peak_flops_per_s / 1e12, 100 * r.mfu_causal));
    line("HFU", fmt::format("{:.1f}%  (executed FLOPs incl. recomputation)", 100 * r.hfu));
    const bool multi_vm_domain = s.system.is_gpu && s.system.domain_gpus() > s.system.node.gpus_per_node;
    for (const auto& n : r.networks)
        line("network " + n.group,
             fmt::format("{} ranks over {} ({}){}", n.size, n.path, n.algorithm,
                         !multi_vm_domain         ? ""
                         : n.in_one_nvlink_domain ? fmt::format("; inside one NVLink domain of {}", s.system.domain_gpus())
                                                  : fmt::format("; spans NVLink domains of {}", s.system.domain_gpus())));
    line("network backend", r.network_backend);
    line("efficiencies", r.efficiency_source);
    const auto& m = r.memory;
    line("memory per device", fmt::format("{:.1f} GiB of {:.1f} GiB HBM ({})", m.total_bytes / kGiB, m.hbm_bytes / kGiB,
                                          m.fits ? "fits" : "DOES NOT FIT"));
    line("  weights + master", fmt::format("{:.1f} + {:.1f} GiB", m.weights_bytes / kGiB, m.master_bytes / kGiB));
    line("  gradients + optimizer", fmt::format("{:.1f} + {:.1f} GiB", m.gradients_bytes / kGiB, m.optimizer_bytes / kGiB));
    line("  activations", fmt::format("{:.1f} GiB (+{:.1f} GiB transient)", m.activations_bytes / kGiB, m.transient_bytes / kGiB));
    line("  workspace reserve", fmt::format("{:.1f} GiB", m.workspace_bytes / kGiB));
    if (c.token_budget > 0) {
        line("token budget", large_count(c.token_budget) + " tokens");
        line("time to train", duration(c.time_to_train_s) + " (no failures)");
        if (r.evaluation)
            line("  of which evaluation",
                 fmt::format("{} passes of {:.3f} s = {} ({:.1f}% of wall time; training steps {})",
                             c.train.evaluations, c.train.eval_pass_s, duration(c.train.eval_s),
                             100 * c.train.eval_share(), duration(c.train.train_s)));
        line("chip-hours", fmt::format("{:.3g}", c.chip_hours));
        const auto& g = c.goodput;
        line("failures", fmt::format("job MTBF {} ({})", duration(g.mtbf_s), c.reliability_file));
        for (const JobFailures& f : c.failures)
            line(fmt::format("  {}", to_string(f.component)),
                 fmt::format("{:.6g} x {:.3g}/h = {:.3g}/h ({})", f.units, f.per_unit_hour, f.per_hour, f.source));
        line("checkpoint", fmt::format("{:.1f} TB to {}: written in {}{}, restored in {}; Young/Daly interval {}",
                                       g.checkpoint_bytes / 1e12, g.checkpoint_storage, duration(g.checkpoint_write_s),
                                       g.async ? fmt::format(" in the background (asynchronous: training pauses {} "
                                                             "to copy shards to host memory)",
                                                             duration(g.checkpoint_blocking_s))
                                               : " (synchronous: training pauses for it)",
                                       duration(g.restore_s), duration(g.interval_s)));
        for (const auto& rc : c.recovery) {
            const RecoveryOption& o = rc.option;
            line("  recovery: " + o.id,
                 o.applicable ? fmt::format("goodput {:.1f}%, {} to train{}: {} (per failure: {} down, {} of work lost; "
                                            "checkpoint pause {} every {})",
                                            100 * o.goodput, duration(o.effective_time_s),
                                            rc.usd_on_demand_with_failures ? ", " + money(*rc.usd_on_demand_with_failures) +
                                                                                 " on demand"
                                                                           : std::string(),
                                            o.name, duration(o.downtime_per_failure_s),
                                            duration(o.lost_work_per_failure_s), duration(o.checkpoint_pause_s),
                                            duration(o.interval_s))
                              : "not applicable: " + o.why_not);
        }
        line("goodput", fmt::format("{:.1f}% -> {} to train ({:.1f}% and {} on spot, with preemptions)",
                                    100 * g.goodput, duration(g.effective_time_s), 100 * c.goodput_spot.goodput,
                                    duration(c.goodput_spot.effective_time_s)));
    }
    if (!c.no_price_reason.empty()) {
        line("cost", c.no_price_reason);
    } else {
        line("prices", fmt::format("{} per {} in {} ({}{})", c.price_sku, c.price_unit == "chip_hour" ? "chip-hour" : "VM-hour",
                                   c.price_region, c.price_date.empty() ? "" : c.price_date + ", ", c.price_source));
        for (const auto& oc : c.options) {
            if (!oc.usd_per_hour) {
                line(std::string("  ") + to_string(oc.option), oc.offered ? "no price in catalog" : "not offered");
                continue;
            }
            std::string v = fmt::format("{}/h, {:.2f} $/M tokens", money(*oc.usd_per_hour), *oc.usd_per_million_tokens);
            if (oc.usd_total) v += ", total " + money(*oc.usd_total);
            if (oc.usd_total_with_failures) v += " (" + money(*oc.usd_total_with_failures) + " with failures)";
            if (oc.usd_commitment)
                v += fmt::format("; the commitment itself: {} for {} term{} of {:g} h, the run uses {:.0f}% of it",
                                 money(*oc.usd_commitment), oc.terms, oc.terms > 1 ? "s" : "", *oc.term_hours,
                                 100 * oc.run_share_of_commitment);
            line(std::string("  ") + to_string(oc.option), v);
        }
    }
    if (!r.layer_forward.empty()) {
        o += "\n  one layer, one micro-batch, one device:\n";
        o += fmt::format("    {:<30} {:>10} {:>10} {:>10} {:>8}\n", "op", "time_ms", "GFLOP", "MB", "TFLOP/s");
        for (const auto* pass : {&r.layer_forward, &r.layer_backward}) {
            double total = 0;
            for (const auto& t : *pass) {
                total += t.time_s;
                o += fmt::format("    {:<30} {:>10.3f} {:>10.1f} {:>10.1f} {:>8.0f}\n", t.name, t.time_s * 1e3, t.flops / 1e9,
                                 t.bytes / 1e6, t.time_s > 0 ? t.flops / t.time_s / 1e12 : 0.0);
            }
            o += fmt::format("    {:<30} {:>10.3f}\n", pass == &r.layer_forward ? "forward total" : "backward total", total * 1e3);
        }
    }
    line("simulated tasks", fmt::format("{} (one pipeline; identical replicas simulated once)", r.simulated_tasks));
    o += fmt::format("\n  MFU convention: {}\n", kMfuConvention);
    return o;
}

Json run_json(const Scenario& s, const StepResult& r, const CostReport& c) {
    Json j = output_head("run");
    j["scenario"] = scenario_ref_json(s);
    j["model"] = {{"name", s.model.name}, {"params", s.model.total_params()}, {"layers", s.model.layers}};
    j["system"] = system_json(s.system);
    j["plan"] = plan_json(s.plan);
    j["plan_choices"] = s.plan_choices;
    j["software_stack"] = s.stack.id;
    j["feasible"] = r.feasible;
    j["infeasible_reasons"] = r.infeasible;
    // An infeasible plan still says what its memory would be: the reason is most often that it does not fit.
    j["memory_per_device_bytes"] = memory_json(r.memory);
    if (!r.feasible) return j;
    j["step_time_s"] = r.step_time_s;
    j["breakdown_s"] = breakdown_json(r.breakdown);
    if (r.evaluation) {
        const EvalPass& e = *r.evaluation;
        j["evaluation"] = {{"tokens", e.spec.tokens}, {"interval_steps", e.spec.interval_steps},
                           {"global_batch_seqs", e.spec.global_batch_seqs}, {"sequences", e.sequences},
                           {"full_batches", e.full_batches}, {"last_batch_seqs", e.last_batch_seqs},
                           {"micro_batches_per_batch", e.micro_batches}, {"batch_s", e.batch_s},
                           {"eval_pass_s", e.pass_s}, {"step_time_incl_eval_s", c.train.step_incl_eval_s}};
    } else {
        j["evaluation"] = nullptr;
    }
    j["tokens_per_s"] = r.tokens_per_s;
    j["mfu"] = r.mfu;
    j["mfu_causal_halved"] = r.mfu_causal;
    j["hfu"] = r.hfu;
    j["peak"] = {{"name", r.peak_name}, {"flops_per_s", r.peak_flops_per_s}};
    j["mfu_convention"] = kMfuConvention;
    j["model_flops_per_step"] = r.model_flops_per_step;
    j["hardware_flops_per_step"] = r.hardware_flops_per_step;
    j["efficiency_source"] = r.efficiency_source;
    j["network_backend"] = r.network_backend;
    j["networks"] = networks_json(r.networks);
    j["input"] = nullptr;
    if (r.input) {
        const InputTiming& in = *r.input;
        j["input"] = {{"storage", s.data->storage.id}, {"hosts", in.hosts}, {"samples_per_host", in.samples_per_host},
                      {"bytes_per_host", in.bytes_per_host}, {"storage_bytes_per_s", in.storage_bytes_per_s},
                      {"storage_s", in.storage_s}, {"host_cpu_cores", in.cores}, {"cpu_s", in.cpu_s},
                      {"per_step_s", in.per_step_s}, {"bottleneck", in.bottleneck},
                      {"prefetch_steps", s.data->prefetch_steps}, {"input_bound", r.breakdown.input_wait_s > 0},
                      {"source", s.data->source}};
    }
    Json cost;
    cost["token_budget"] = c.token_budget;
    cost["time_to_train_s"] = c.time_to_train_s;
    if (r.evaluation) {
        cost["train_steps_time_s"] = c.train.train_s;
        cost["evaluations"] = c.train.evaluations;
        cost["eval_time_s"] = c.train.eval_s;
        cost["eval_share_of_wall_time"] = c.train.eval_share();
    }
    cost["chip_hours"] = c.chip_hours;
    auto gp = [](const Goodput& g) {
        return Json{{"checkpoint_bytes", g.checkpoint_bytes}, {"checkpoint_write_s", g.checkpoint_write_s},
                    {"checkpoint_blocking_s", g.checkpoint_blocking_s}, {"restore_s", g.restore_s},
                    {"checkpoint_storage", g.checkpoint_storage}, {"async_checkpoint", g.async},
                    {"mtbf_s", g.mtbf_s}, {"checkpoint_interval_s", g.interval_s}, {"goodput", g.goodput},
                    {"effective_time_s", g.effective_time_s}};
    };
    cost["goodput"] = gp(c.goodput);
    cost["goodput_spot"] = gp(c.goodput_spot);
    cost["recovery"] = Json::array();
    for (const auto& rc : c.recovery) {
        const RecoveryOption& o = rc.option;
        cost["recovery"].push_back(
            {{"id", o.id}, {"name", o.name}, {"applicable", o.applicable},
             {"why_not", o.applicable ? Json(nullptr) : Json(o.why_not)},
             {"goodput", o.applicable ? Json(o.goodput) : Json(nullptr)},
             {"effective_time_s", o.applicable ? Json(o.effective_time_s) : Json(nullptr)},
             {"downtime_per_failure_s", o.downtime_per_failure_s}, {"lost_work_per_failure_s", o.lost_work_per_failure_s},
             {"checkpoint_pause_s", o.checkpoint_pause_s}, {"checkpoint_interval_s", o.interval_s},
             {"spare_hosts", o.spare_hosts}, {"spare_unit", o.spare_unit.empty() ? Json(nullptr) : Json(o.spare_unit)},
             {"usd_on_demand_with_failures",
              rc.usd_on_demand_with_failures ? Json(*rc.usd_on_demand_with_failures) : Json(nullptr)}});
    }
    cost["reliability_source"] = c.reliability_file;
    cost["failures"] = Json::array();
    for (const JobFailures& f : c.failures)
        cost["failures"].push_back({{"component", to_string(f.component)}, {"units", f.units},
                                    {"per_unit_hour", f.per_unit_hour}, {"per_hour", f.per_hour}, {"source", f.source}});
    cost["no_price_reason"] = c.no_price_reason.empty() ? Json(nullptr) : Json(c.no_price_reason);
    cost["price"] = nullptr;
    cost["options"] = Json::array();
    if (c.no_price_reason.empty()) {
        cost["price"] = {{"sku", c.price_sku}, {"region", c.price_region}, {"unit", c.price_unit},
                         {"source", c.price_source}, {"source_date", c.price_date}};
        for (const auto& oc : c.options) cost["options"].push_back(option_cost_json(oc));
    }
    j["cost"] = cost;
    j["simulated_tasks"] = r.simulated_tasks;
    return j;
}

}  // namespace podsim
