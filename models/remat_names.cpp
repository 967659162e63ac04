#include "models/remat_names.hpp"

#include <utility>

#include "models/plan.hpp"

namespace podsim {

namespace {

constexpr unsigned bit(RematTensor t) { return 1u << unsigned(t); }
constexpr unsigned kQkv = bit(RematTensor::query) | bit(RematTensor::key) | bit(RematTensor::value);
constexpr unsigned kMlpWi = bit(RematTensor::mlp_wi_0) | bit(RematTensor::mlp_wi_1);
// MaxText names the experts' gate and down outputs twice (moe.py: checkpoint_name(checkpoint_name(x, "mlpwi_0"),
// "moe_mlpwi_0"), the same for mlpwo), so the dense names keep the experts' too; the experts' up half (sparse path)
// only as moe_mlpwi_1.
constexpr unsigned kWi0 = bit(RematTensor::mlp_wi_0) | bit(RematTensor::moe_wi_0);
constexpr unsigned kWo = bit(RematTensor::mlp_wo) | bit(RematTensor::moe_wo);

// MaxText's checkpoint names and the tensors each stands for (kv_proj and qkv_proj name fused projections; mlpwi the
// ungated up projection, one matrix).
const std::pair<const char*, unsigned> kNames[] = {
    {"decoder_layer_input", bit(RematTensor::layer_input)},
    {"query_proj", bit(RematTensor::query)},
    {"key_proj", bit(RematTensor::key)},
    {"value_proj", bit(RematTensor::value)},
    {"kv_proj", bit(RematTensor::key) | bit(RematTensor::value)},
    {"qkv_proj", kQkv},
    {"context", bit(RematTensor::context)},
    {"out_proj", bit(RematTensor::out_proj)},
    {"mlpwi", kMlpWi},
    {"mlpwi_0", kWi0},
    {"mlpwi_1", bit(RematTensor::mlp_wi_1)},
    {"mlpwo", kWo},
    {"moe_mlpwi_0", bit(RematTensor::moe_wi_0)},
    {"moe_mlpwi_1", bit(RematTensor::moe_wi_1)},
    {"moe_mlpwo", bit(RematTensor::moe_wo)},
};
// base.yml's other checkpoint names (MLA's latents and projections, DeepSeek-V3.2's indexer, the attention output
// before its projection, Engram): podsim prices none of them kept, so only "remat" (their default) is accepted.
const char* const kUnpriced[] = {"query_wa_proj", "kv_wa_proj", "mla_q", "mla_kv", "attention_out",
                                 "indexer_cutoff_threshold", "engram"};
// MaxText's remat_policy names (base.yml's list, decoders.py get_remat_policy).
const char* const kPolicies[] = {"minimal_with_context", "minimal_flash", "minimal", "save_dot_with_context_except_mlp",
                                 "save_dot_except_mlpwi", "save_dot_except_mlp", "save_qkv_proj", "qkv_proj_offloaded",
                                 "custom", "minimal_offloaded", "save_out_proj", "full", "none"};

// The printed names of a mask: one name per tensor, the fused names where they cover all of theirs.
std::string names_of(unsigned mask) {
    std::string out;
    auto add = [&](const char* n) { out += (out.empty() ? "" : ",") + std::string(n); };
    if (mask & bit(RematTensor::layer_input)) add("decoder_layer_input");
    if ((mask & kQkv) == kQkv) add("qkv_proj");
    else {
        if (mask & bit(RematTensor::query)) add("query_proj");
        if (mask & bit(RematTensor::key)) add("key_proj");
        if (mask & bit(RematTensor::value)) add("value_proj");
    }
    if (mask & bit(RematTensor::context)) add("context");
    if (mask & bit(RematTensor::out_proj)) add("out_proj");
    if ((mask & kMlpWi) == kMlpWi) add("mlpwi");
    else {
        if (mask & bit(RematTensor::mlp_wi_0)) add("mlpwi_0");
        if (mask & bit(RematTensor::mlp_wi_1)) add("mlpwi_1");
    }
    if (mask & bit(RematTensor::mlp_wo)) add("mlpwo");
    if ((mask & bit(RematTensor::moe_wi_0)) && !(mask & bit(RematTensor::mlp_wi_0))) add("moe_mlpwi_0");
    if (mask & bit(RematTensor::moe_wi_1)) add("moe_mlpwi_1");
    if ((mask & bit(RematTensor::moe_wo)) && !(mask & bit(RematTensor::mlp_wo))) add("moe_mlpwo");
    return out;
}

}  // namespace

std::string to_string(const RematNames& r) {
    std::string s = names_of(r.device);
    if (r.offload) s += std::string(s.empty() ? "" : "; ") + "offloaded: " + names_of(r.offload);
    return s;
}

RematNames remat_tensors_at(const JsonObject& o, const char* key) {
    const JsonObject t = o.object(key);
    RematNames r;
    r.device = r.offload = 0;
    unsigned given = 0;
    for (const auto& [name, mask] : kNames) {
        if (!t.has(name)) continue;
        const std::string v = t.one_of(name, {"device", "offload", "remat"});
        // Two names for one tensor (qkv_proj and query_proj) must agree on its place.
        const unsigned dev = v == "device" ? mask : 0, off = v == "offload" ? mask : 0;
        const unsigned overlap = given & mask;
        if ((r.device & overlap) != (dev & overlap) || (r.offload & overlap) != (off & overlap))
            t.fail(name, "the same place as the other names of its tensors (kv_proj / qkv_proj / mlpwi cover several)");
        r.device |= dev, r.offload |= off, given |= mask;
    }
    for (auto it = t.raw().begin(); it != t.raw().end(); ++it) {
        bool known = false;
        for (const auto& [name, mask] : kNames) known = known || it.key() == name;
        for (const char* name : kUnpriced)
            if (it.key() == name) {
                known = true;
                if (t.one_of(name, {"device", "offload", "remat"}) != "remat")
                    t.fail(name, "\"remat\" (podsim does not price keeping this tensor)");
            }
        if (!known)
            t.fail(it.key(), "a MaxText checkpoint name (decoder_layer_input, query_proj, key_proj, value_proj, kv_proj, "
                             "qkv_proj, context, out_proj, mlpwi, mlpwi_0, mlpwi_1, mlpwo, moe_mlpwi_0, moe_mlpwi_1, "
                             "moe_mlpwo; base.yml's others only as remat)");
    }
    // MaxText base.yml: the layer input "cannot be rematerialized - it serves as periodic checkpoints that act as
    // the remat start points"; it stays on the device unless offloaded.
    if (!(given & bit(RematTensor::layer_input))) r.device |= bit(RematTensor::layer_input);
    else if (!r.kept(RematTensor::layer_input))
        t.fail("decoder_layer_input", "\"device\" or \"offload\" (the layer input is where recomputation starts)");
    return r;
}

std::string maxtext_remat_policy_list() {
    std::string s;
    for (const char* n : kPolicies) s += (s.empty() ? "" : ", ") + std::string(n);
    return s;
}

RematPolicy remat_policy_at(const JsonObject& o, const char* key, const std::string& name) {
    auto policy = maxtext_remat_policy(name);
    if (!policy) o.fail(key, "a podsim recomputation mode (none, selective, minimal, full) or a MaxText remat_policy (" +
                                 maxtext_remat_policy_list() + ")");
    if (name == "custom") {
        if (!o.has("remat_tensors"))
            o.fail("remat_tensors", "the tensors remat_policy=custom keeps (MaxText names to device/offload/remat)");
        policy->names = remat_tensors_at(o, "remat_tensors");
    } else if (o.has("remat_tensors")) {
        o.fail("remat_tensors", "no remat_tensors unless the remat policy is custom");
    }
    return *policy;
}

std::optional<RematPolicy> maxtext_remat_policy(const std::string& name) {
    // MaxText decoders.py get_remat_policy (and maxtext_utils.get_save_and_offload_names for the offloaded
    // presets). minimal keeps every weight GEMM's output, which is podsim's minimal mode; full keeps the input only.
    auto names = [](unsigned device, unsigned offload = 0) {
        RematPolicy p;
        p.recompute = Recompute::names;
        p.names.device = bit(RematTensor::layer_input) | device;
        p.names.offload = offload;
        return p;
    };
    const unsigned dots = kQkv | bit(RematTensor::out_proj) | kMlpWi | kWi0 | kWo;
    // "none" is no policy, and nn.remat without one saves nothing: full rematerialization.
    if (name == "full" || name == "none") return RematPolicy{Recompute::full, {}};
    if (name == "minimal") return RematPolicy{Recompute::minimal, {}};
    if (name == "minimal_with_context" || name == "minimal_flash") return names(dots | bit(RematTensor::context));
    if (name == "save_dot_with_context_except_mlp")
        return names(kQkv | bit(RematTensor::context) | bit(RematTensor::out_proj));
    if (name == "save_dot_except_mlpwi") return names(kQkv | bit(RematTensor::out_proj) | kWo);
    if (name == "save_dot_except_mlp") return names(kQkv | bit(RematTensor::out_proj));
    if (name == "save_qkv_proj") return names(kQkv);
    if (name == "qkv_proj_offloaded") return names(0, kQkv);
    if (name == "minimal_offloaded") return names(0, dots);
    if (name == "save_out_proj") return names(bit(RematTensor::out_proj));
    if (name == "custom") return names(0);  // the tensors come from remat_tensors_at
    return std::nullopt;
}

std::string recompute_label(const ParallelPlan& p) {
    if (p.recompute != Recompute::names) return to_string(p.recompute);
    return "names(" + to_string(p.remat) + ")";
}

}  // namespace podsim
