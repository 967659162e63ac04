#include "reports/json_parts.hpp"

namespace podsim {

using nlohmann::json;

namespace {
json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
}  // namespace

json output_head(const char* command) { return {{"schema_version", kOutputSchemaVersion}, {"command", command}}; }

const char* price_option_key(PriceOption p) {
    switch (p) {
        case PriceOption::on_demand: return "on-demand";
        case PriceOption::spot: return "spot";
        case PriceOption::commit_1y: return "1y";
        case PriceOption::commit_3y: break;
    }
    return "3y";
}

json scenario_ref_json(const Scenario& s) { return {{"name", s.name}, {"file", s.file}}; }

json system_json(const SystemSpec& s) { return {{"label", s.label}, {"chip", s.chip.id}, {"chips", s.chips}}; }

json plan_json(const ParallelPlan& p) {
    return {{"dp", p.dp}, {"tp", p.tp}, {"pp", p.pp}, {"vpp", p.vpp}, {"cp", p.cp},
            {"cp_algorithm", p.cp_algorithm == ParallelPlan::CpAlgorithm::ring ? "ring" : "all_gather"}, {"ep", p.ep}, {"etp", p.expert_tp()},
            {"sp", p.sp}, {"zero", p.zero}, {"schedule", to_string(p.schedule)}, {"micro_batch", p.micro_batch},
            {"global_batch_seqs", p.global_batch}, {"micro_batches", p.micro_batches()},
            {"precision", to_string(p.precision)},
            {"fp8_recipe", p.precision == Precision::fp8 ? json(to_string(p.fp8_recipe)) : json(nullptr)},
            {"recompute", recompute_label(p)}, {"offload_layers", p.offload_layers},
            {"attention", to_string(p.attention)}, {"tp_comm_overlap", to_string(p.tp_comm_overlap)},
            {"grouped_gemm_row_tile",
             {{"up", {p.gmm_row_tiles.up[0], p.gmm_row_tiles.up[1], p.gmm_row_tiles.up[2]}},
              {"down", {p.gmm_row_tiles.down[0], p.gmm_row_tiles.down[1], p.gmm_row_tiles.down[2]}}}}};
}

json breakdown_json(const StepBreakdown& b) {
    return {{"compute", b.compute_s}, {"exposed_communication", b.exposed_comm_s}, {"pipeline_bubble", b.bubble_s},
            {"optimizer", b.optimizer_s}, {"input_wait", b.input_wait_s}};
}

json memory_json(const MemoryBreakdown& m) {
    return {{"weights", m.weights_bytes}, {"master_weights", m.master_bytes}, {"gradients", m.gradients_bytes},
            {"optimizer_states", m.optimizer_bytes}, {"activations", m.activations_bytes},
            {"transient", m.transient_bytes}, {"workspace", m.workspace_bytes}, {"total", m.total_bytes},
            {"host_offload", m.host_offload_bytes},
            {"hbm", m.hbm_bytes}, {"fits", m.fits}};
}

json networks_json(const std::vector<NetworkUse>& n) {
    json a = json::array();
    for (const auto& u : n)
        a.push_back({{"group", u.group}, {"size", u.size}, {"path", u.path}, {"algorithm", u.algorithm},
                     {"in_one_nvlink_domain", u.in_one_nvlink_domain}});
    return a;
}

json option_cost_json(const OptionCost& oc) {
    json x{{"price_option", price_option_key(oc.option)}, {"offered", oc.offered},
           {"usd_per_hour", opt(oc.usd_per_hour)}, {"usd_total", opt(oc.usd_total)},
           {"usd_total_with_failures", opt(oc.usd_total_with_failures)},
           {"usd_per_million_tokens", opt(oc.usd_per_million_tokens)}, {"usd_outlay", opt(oc.usd_outlay)},
           {"effective_time_s", oc.effective_time_s > 0 ? json(oc.effective_time_s) : json(nullptr)},
           {"commitment", nullptr}};
    if (oc.term_hours)
        x["commitment"] = {{"term_hours", *oc.term_hours}, {"terms", oc.terms}, {"usd", opt(oc.usd_commitment)},
                           {"run_share", oc.run_share_of_commitment}};
    return x;
}

json ranked_plan_json(const RankedPlan& p, PriceOption price) {
    json j;
    j["system"] = system_json(p.system);
    j["plan"] = plan_json(p.plan);
    j["step_time_s"] = p.step.step_time_s;
    j["screened_step_time_s"] = p.screened.step_time_s;
    j["simgrid_step_time_s"] = opt(p.simgrid_step_s);
    j["equivalent_plans"] = p.equivalents;
    j["breakdown_s"] = breakdown_json(p.step.breakdown);
    j["tokens_per_s"] = p.step.tokens_per_s;
    j["mfu"] = p.step.mfu;
    j["mfu_causal_halved"] = p.step.mfu_causal;
    j["hfu"] = p.step.hfu;
    j["memory_per_device_bytes"] = memory_json(p.step.memory);
    // Where each parallel group sits and the collective algorithm it was priced with.
    j["networks"] = networks_json(p.step.networks);
    j["time_to_train_s"] = p.cost.time_to_train_s > 0 ? json(p.cost.time_to_train_s) : json(nullptr);
    const OptionCost* oc = find_option(p.cost, price);
    j["cost"] = oc ? option_cost_json(*oc) : json(nullptr);
    return j;
}

}  // namespace podsim
