#include "reports/stages_report.hpp"

namespace podsim {

namespace {

Json ops_json(const std::vector<OpTiming>& ops) {
    Json out = Json::array();
    for (const OpTiming& o : ops)
        out.push_back({{"op", o.name}, {"kind", to_string(o.kind)}, {"time_s", o.time_s}, {"flops", o.flops},
                       {"bytes", o.bytes}});
    return out;
}

}  // namespace

Json stages_json(const Scenario& s, const StepCosts& c, const LoweredStep* low) {
    Json j;
    j["scenario"] = s.name;
    j["feasible"] = c.reject == Reject::none;
    j["reject"] = to_string(c.reject);
    j["reasons"] = c.reasons;
    j["op_list"] = {{"what", "one layer, one micro-batch, one device"},
                    {"forward", ops_json(c.layer_forward)},
                    {"backward", ops_json(c.layer_backward)}};
    Json sc;
    sc["schedule"] = to_string(c.schedule);
    sc["pp"] = c.pp, sc["vpp"] = c.vpp, sc["micro_batches"] = c.micro_batches;
    sc["gradient_sync"] = c.bucketed ? "bucketed under the backward"
                                     : (c.dp_sync || c.dcn_sync) ? "after the flush" : "none";
    sc["p2p_s"] = c.p2p_s;
    Json chunks = Json::array();
    for (int st = 0; st < c.pp && !c.chunks.empty(); ++st)
        for (int k = 0; k < c.vpp; ++k) {
            const ChunkCosts& ck = c.chunk(st, k);
            chunks.push_back({{"stage", st}, {"chunk", k}, {"layers", ck.layers}, {"moe_layers", ck.moe_layers},
                              {"forward_s", ck.fwd_s}, {"forward_exposed_comm_s", ck.fwd_exposed_s},
                              {"backward_s", ck.bwd_s}, {"backward_exposed_comm_s", ck.bwd_exposed_s},
                              {"grad_sync_s", ck.grad_sync_s}, {"buckets", ck.pieces},
                              {"bucket_slowdown_s", ck.slowdown_s}});
        }
    sc["chunks"] = chunks;
    Json stages = Json::array();
    for (size_t st = 0; st < c.stages.size(); ++st) {
        const StageCosts& x = c.stages[st];
        stages.push_back({{"stage", st}, {"layers", x.layers}, {"params", x.params},
                          {"expert_params", x.expert_params}, {"flush_sync_s", x.flush_sync_s},
                          {"optimizer_s", x.optimizer_s}, {"param_gather_s", x.param_gather_s}});
    }
    sc["stages"] = stages;
    sc["memory_bytes"] = c.memory.total_bytes;
    sc["hbm_bytes"] = c.memory.hbm_bytes;
    sc["tokens_per_step"] = c.tokens_per_step;
    sc["model_flops_per_step"] = c.model_flops_per_step;
    sc["hardware_flops_per_step"] = c.hardware_flops_per_step;
    j["step_costs"] = sc;
    if (low) {
        const TaskGraph& g = low->graph;
        j["task_graph"] = {{"tasks", g.task_count()}, {"streams", g.stream_names.size()},
                           {"cost_classes", g.cost_classes().size()}, {"dependencies", g.edges().size()}};
    } else {
        j["task_graph"] = nullptr;
    }
    return j;
}

}  // namespace podsim
