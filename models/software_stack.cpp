#include "models/software_stack.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "hardware/input_error.hpp"
#include "hardware/json_reader.hpp"

namespace podsim {

namespace {

std::string normalized(const std::string& s) {
    std::string out;
    for (unsigned char c : s) {
        if (std::isspace(c)) {
            if (!out.empty() && out.back() != ' ') out += ' ';
        } else {
            out += static_cast<char>(std::tolower(c));
        }
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
}

std::string fmt_bytes(double x) {
    std::string t = std::to_string(x);
    while (t.size() > 1 && t.back() == '0') t.pop_back();
    if (!t.empty() && t.back() == '.') t.pop_back();
    return t;
}

bool boundary(const std::string& s, size_t i) { return i >= s.size() || !std::isalnum(static_cast<unsigned char>(s[i])); }

SoftwareStack read_stack(const JsonObject& o) {
    o.only_keys({"schema_version", "id", "names", "description", "behaviours"});
    if (o.integer("schema_version") != 1) o.fail("schema_version", "expected 1");
    SoftwareStack s;
    s.id = o.string("id");
    s.names = o.string_array("names");
    if (s.names.empty()) o.fail("names", "expected at least one name");
    s.description = o.opt_string("description").value_or("");
    const JsonObject b = o.object("behaviours");
    b.only_keys({"tp_comm_overlap", "dp_overlap", "grad_reduce_bytes", "param_gather_overlap", "attention",
                 "sequence_parallel", "interleaved_pipeline", "zero_stages", "dropout", "linear_bias", "weights",
                 "fp8", "ep_overlap", "ep_node_dedup", "dcn_sync_overlap",
                 "act_fused_into_gemm", "grad_accum_bytes_per_param", "pipeline_p2p", "zero_grad_sync",
                 "activation_offload", "fp8_saved_inputs", "virtual_stage_layers", "selective_recompute",
                 "elementwise_kernels", "recompute_reruns", "cp_algorithm", "grouped_gemm_row_tile"});
    // Each behaviour: {"value": ..., "source": "..."}; all are required, so a stack is never half-described.
    auto entry = [&](const char* key) {
        const JsonObject e = b.object(key);
        e.only_keys({"value", "source"});
        const std::string src = e.string("source");
        if (src.empty()) e.fail("source", "expected a non-empty citation");
        s.sources[key] = src;
        return e;
    };
    s.tp_comm_overlap = tp_overlap_at(entry("tp_comm_overlap"), "value");
    s.dp_overlap = entry("dp_overlap").boolean("value");
    s.grad_reduce_bytes = entry("grad_reduce_bytes").number_in("value", 0.5, 8);
    s.param_gather_overlap = entry("param_gather_overlap").boolean("value");
    s.attention = attention_kernel_at(entry("attention"), "value");
    s.selective = entry("selective_recompute").one_of("value", {"attention_core", "alternate_matmuls"}) == "alternate_matmuls"
                      ? SelectiveRecompute::alternate_matmuls
                      : SelectiveRecompute::attention_core;
    s.eager_elementwise = entry("elementwise_kernels").one_of("value", {"fused", "eager"}) == "eager";
    s.recompute_needed_only = entry("recompute_reruns").one_of("value", {"all", "needed"}) == "needed";
    {
        const auto v = entry("sequence_parallel").one_of("value", {"never", "optional", "always"});
        s.sequence_parallel = v == "never" ? SpPolicy::never : v == "always" ? SpPolicy::always : SpPolicy::optional;
    }
    s.interleaved_pipeline = entry("interleaved_pipeline").boolean("value");
    {
        const JsonObject e = entry("zero_stages");
        const Json& a = e.array("value");
        s.zero_stages.clear();
        for (size_t i = 0; i < a.size(); ++i) {
            if (!a[i].is_number_integer() || a[i].get<long long>() < 0 || a[i].get<long long>() > 3)
                e.fail("value", "expected ZeRO stages 0-3 at [" + std::to_string(i) + "]");
            s.zero_stages.push_back(a[i].get<int>());
        }
        if (s.zero_stages.empty()) e.fail("value", "expected at least one ZeRO stage");
    }
    s.dropout = entry("dropout").boolean("value");
    s.linear_bias = entry("linear_bias").boolean("value");
    s.weights = entry("weights").one_of("value", {"fp32_master_16bit_copy", "fp32_cast_on_use"}) == "fp32_cast_on_use"
                    ? WeightKeeping::fp32_cast_on_use
                    : WeightKeeping::master_and_16bit_copy;
    s.fp8 = entry("fp8").boolean("value");
    s.ep_overlap = entry("ep_overlap").boolean("value");
    s.ep_node_dedup = entry("ep_node_dedup").boolean("value");
    s.dcn_sync_overlap = entry("dcn_sync_overlap").boolean("value");
    s.act_fused_into_gemm = entry("act_fused_into_gemm").boolean("value");
    s.grad_accum_bytes_per_param = entry("grad_accum_bytes_per_param").number_in("value", 0, 64);
    {
        const auto v = entry("pipeline_p2p").one_of("value", {"scatter_gather", "sequence_shard", "full_blocking"});
        s.pipeline_p2p = v == "scatter_gather"   ? PipelineP2p::scatter_gather
                         : v == "sequence_shard" ? PipelineP2p::sequence_shard
                                                 : PipelineP2p::full_blocking;
    }
    s.zero_grad_all_reduce = entry("zero_grad_sync").one_of("value", {"reduce_scatter", "all_reduce"}) == "all_reduce";
    s.activation_offload = entry("activation_offload").one_of("value", {"none", "layers"}) == "layers";
    s.fp8_saved_inputs = entry("fp8_saved_inputs").one_of("value", {"fp8", "high_precision"}) == "fp8";
    s.uneven_virtual_stages = entry("virtual_stage_layers").one_of("value", {"even", "uneven"}) == "uneven";
    s.cp_algorithm = entry("cp_algorithm").one_of("value", {"ring", "all_gather"}) == "ring"
                         ? ParallelPlan::CpAlgorithm::ring
                         : ParallelPlan::CpAlgorithm::all_gather;
    s.gmm_row_tile = int(entry("grouped_gemm_row_tile").int_in("value", 0, 65536));
    return s;
}

}  // namespace

std::vector<SoftwareStack> load_software_stacks(const std::string& catalog_dir) {
    namespace fs = std::filesystem;
    std::vector<SoftwareStack> out;
    const std::string dir = catalog_dir + "/software";
    if (!fs::is_directory(dir)) return out;
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().extension() == ".json") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
        const Json j = load_json_file(f);
        SoftwareStack s = read_stack(JsonObject(j, f, "$"));
        for (const auto& other : out)
            if (other.id == s.id) throw InputError(f, "$.id", "duplicate software stack id \"" + s.id + "\"");
        out.push_back(std::move(s));
    }
    return out;
}

const SoftwareStack* find_stack(const std::vector<SoftwareStack>& stacks, const std::string& framework) {
    const std::string text = normalized(framework);
    const SoftwareStack* best = nullptr;
    size_t best_pos = std::string::npos, best_len = 0;
    for (const auto& s : stacks)
        for (const auto& name : s.names) {
            const std::string n = normalized(name);
            if (n.empty()) continue;
            for (size_t pos = text.find(n); pos != std::string::npos; pos = text.find(n, pos + 1)) {
                if ((pos > 0 && !boundary(text, pos - 1)) || !boundary(text, pos + n.size())) continue;
                if (pos < best_pos || (pos == best_pos && n.size() > best_len)) best = &s, best_pos = pos, best_len = n.size();
                break;
            }
        }
    return best;
}

SoftwareStack unknown_stack(const std::string& framework) {
    SoftwareStack s;
    s.id = "unknown";
    s.description = "\"" + framework + "\" is not in the software catalog: behaviours chosen as the best feasible";
    s.in_catalog = false;
    s.tp_comm_overlap = TpOverlap::full;
    s.dp_overlap = true, s.param_gather_overlap = true, s.grad_reduce_bytes = 2;
    s.attention = AttentionKernel::flash;
    s.sequence_parallel = SpPolicy::optional;
    s.interleaved_pipeline = true;
    s.zero_stages = {0, 1, 2, 3};
    s.dropout = false, s.linear_bias = false, s.fp8 = true;
    s.activation_offload = true, s.fp8_saved_inputs = true, s.uneven_virtual_stages = true;
    s.recompute_needed_only = true;
    return s;
}

SoftwareStack default_scenario_stack() {
    SoftwareStack s;
    s.id = "podsim-default";
    s.description = "no training.framework given: podsim's documented defaults";
    s.in_catalog = false;
    s.tp_comm_overlap = TpOverlap::none;
    s.dp_overlap = true, s.param_gather_overlap = true, s.grad_reduce_bytes = 2;
    s.attention = AttentionKernel::flash;
    s.activation_offload = true;  // a choice the completion may make where the system has a host link
    s.fp8_saved_inputs = true;    // fp8 as Transformer Engine runs it
    return s;
}

std::vector<ChoiceDoc> software_stack_docs(const std::vector<SoftwareStack>& stacks) {
    std::vector<ChoiceDoc> out;
    for (const auto& s : stacks) {
        std::string names;
        for (const auto& n : s.names) names += (names.empty() ? "" : ", ") + n;
        ChoiceDoc d{s.id, s.description + " Names: " + names + ".", {}};
        auto b = [](bool x) { return std::string(x ? "yes" : "no"); };
        std::string zero;
        for (int z : s.zero_stages) zero += (zero.empty() ? "" : ",") + std::to_string(z);
        d.params = {{"tp_comm_overlap", to_string(s.tp_comm_overlap)},
                    {"dp_overlap", b(s.dp_overlap)},
                    {"grad_reduce_bytes", fmt_bytes(s.grad_reduce_bytes)},
                    {"attention", to_string(s.attention)},
                    {"selective_recompute", to_string(s.selective)},
                    {"elementwise_kernels", s.eager_elementwise ? "eager" : "fused"},
                    {"recompute_reruns", s.recompute_needed_only ? "needed" : "all"},
                    {"sequence_parallel", s.sequence_parallel == SpPolicy::never    ? "never"
                                          : s.sequence_parallel == SpPolicy::always ? "always"
                                                                                   : "optional"},
                    {"interleaved_pipeline", b(s.interleaved_pipeline)},
                    {"zero_stages", zero},
                    {"weights", s.weights == WeightKeeping::fp32_cast_on_use ? "fp32 cast on use"
                                                                              : "fp32 master + 16-bit copy"},
                    {"grad_accum_bytes_per_param", fmt_bytes(s.grad_accum_bytes_per_param)},
                    {"dcn_sync_overlap", b(s.dcn_sync_overlap)},
                    {"pipeline_p2p", to_string(s.pipeline_p2p)},
                    {"zero_grad_sync", s.zero_grad_all_reduce ? "all_reduce" : "reduce_scatter"},
                    {"activation_offload", s.activation_offload ? "layers" : "none"},
                    {"fp8_saved_inputs", s.fp8_saved_inputs ? "fp8" : "high_precision"},
                    {"virtual_stage_layers", s.uneven_virtual_stages ? "uneven" : "even"},
                    {"cp_algorithm", s.cp_algorithm == ParallelPlan::CpAlgorithm::ring ? "ring" : "all_gather"},
                    {"grouped_gemm_row_tile", std::to_string(s.gmm_row_tile)}};
        out.push_back(std::move(d));
    }
    return out;
}

void apply_stack_behaviours(const SoftwareStack& stack, PartialPlan& pp, bool keep_bytes) {
    ParallelPlan& p = pp.plan;
    if (pp.free.has(PlanField::attention)) p.attention = stack.attention;
    p.selective = stack.selective;
    p.eager_elementwise = stack.eager_elementwise;
    p.recompute_needed_only = stack.recompute_needed_only;
    if (pp.free.has(PlanField::tp_comm_overlap)) p.tp_comm_overlap = stack.tp_comm_overlap;
    if (pp.free.has(PlanField::dp_overlap)) p.dp_overlap = stack.dp_overlap;
    if (pp.free.has(PlanField::param_gather_overlap)) p.param_gather_overlap = stack.param_gather_overlap;
    p.dcn_sync_overlap = stack.dcn_sync_overlap;
    p.act_fused_into_gemm = stack.act_fused_into_gemm;
    p.fp8_saved_inputs = stack.fp8_saved_inputs;
    p.grad_accum_bytes_per_param = stack.grad_accum_bytes_per_param;
    p.pp_p2p = stack.pipeline_p2p;
    if (!pp.cp_algorithm_stated) p.cp_algorithm = stack.cp_algorithm;
    if (!pp.gmm_row_tiles_stated) p.gmm_row_tiles = GroupedGemmTiles::all(stack.gmm_row_tile);
    p.zero_grad_all_reduce = stack.zero_grad_all_reduce;
    for (PlanField f : {PlanField::attention, PlanField::tp_comm_overlap, PlanField::dp_overlap,
                        PlanField::param_gather_overlap})
        pp.free.remove(f);
    if (keep_bytes) return;
    p.grad_reduce_bytes = stack.grad_reduce_bytes;
    if (stack.weights == WeightKeeping::fp32_cast_on_use) {
        // One fp32 copy cast to 16 bits on use: no 16-bit weight copy, 16-bit gathers (XLA moves the cast before the
        // FSDP all-gather), fp32 gradients.
        p.compute_weight_copy = false, p.param_gather_bytes = 2, p.grad_reduce_bytes = 4;
    }
}

}  // namespace podsim
