#include "models/model_import.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <sstream>

#include "hardware/limits.hpp"

namespace podsim {

namespace {

// --- Hugging Face -------------------------------------------------------------------------------------------------
// Keys and class defaults from huggingface/transformers (models/<type>/configuration_<type>.py); a key the config
// leaves out takes its class's default, as transformers itself would.
struct HfFamily {
    const char* type;
    bool tied_default;        // tie_word_embeddings in the config class
    const char* act_default;  // hidden_act
    bool qkv_bias;            // biases on q/k/v only, not in the config (Qwen2)
};
const std::vector<HfFamily>& families() {
    static const std::vector<HfFamily> f = {
        {"llama", false, "silu", false},       {"mistral", false, "silu", false},
        {"mixtral", false, "silu", false},     {"qwen2", false, "silu", true},
        {"qwen2_moe", false, "silu", true},    {"qwen3", false, "silu", false},
        {"qwen3_moe", false, "silu", false},   {"gemma", true, "gelu_pytorch_tanh", false},
        {"gemma2", true, "gelu_pytorch_tanh", false}, {"gemma3_text", true, "gelu_pytorch_tanh", false},
        {"deepseek_v2", false, "silu", false}, {"deepseek_v3", false, "silu", false},
    };
    return f;
}

std::string gated_activation(const std::string& act, const JsonObject& o, const std::string& key) {
    if (act == "silu" || act == "swish") return "swiglu";
    if (act.rfind("gelu", 0) == 0) return "geglu";
    o.fail(key, "a gated MLP activation podsim prices (silu/swish or gelu*), got \"" + act + "\"");
}

}  // namespace

const std::vector<std::string>& hf_model_types() {
    static const std::vector<std::string> t = [] {
        std::vector<std::string> v;
        for (const auto& f : families()) v.push_back(f.type);
        v.push_back("gemma3");
        return v;
    }();
    return t;
}

ImportedModel import_hf_config(const Json& config, const std::string& file, long long seq_len, const std::string& name) {
    JsonObject top(config, file, "$");
    const std::string top_type = top.string("model_type");
    // Gemma 3 multimodal configs keep the language model under text_config.
    const bool nested = top_type == "gemma3";
    const std::string type = nested ? "gemma3_text" : top_type;
    const JsonObject o = nested ? top.object("text_config") : top;
    const HfFamily* fam = nullptr;
    for (const auto& f : families())
        if (type == f.type) fam = &f;
    if (!fam) {
        std::string known;
        for (const auto& t : hf_model_types()) known += (known.empty() ? "" : ", ") + t;
        top.fail("model_type", "one of the families podsim imports (" + known + "), got \"" + type + "\"");
    }
    ImportedModel out;
    out.family = type;
    Json& m = out.model;
    m["name"] = name;
    const long long hidden = o.int_in("hidden_size", 1, limits::max_hidden);
    const long long heads = o.int_in("num_attention_heads", 1, limits::max_heads);
    m["layers"] = o.int_in("num_hidden_layers", 1, limits::max_layers);
    m["hidden"] = hidden;
    m["heads"] = heads;
    m["kv_heads"] = o.int_in("num_key_value_heads", 1, limits::max_heads, heads);
    m["vocab"] = o.int_in("vocab_size", 1, limits::max_vocab);
    m["seq_len"] = seq_len;
    const long long ffn = o.int_in("intermediate_size", 1, limits::max_ffn_hidden);
    m["ffn_hidden"] = ffn;
    const bool deepseek = type == "deepseek_v2" || type == "deepseek_v3";
    if (deepseek) m["head_dim"] = o.int_in("qk_nope_head_dim", 1, limits::max_head_dim);
    else if (o.has("head_dim") && !o.raw().at("head_dim").is_null()) m["head_dim"] = o.int_in("head_dim", 1, limits::max_head_dim);
    else if (hidden % heads != 0) o.fail("head_dim", "missing, and hidden_size is not a multiple of num_attention_heads");
    // Gemma names its activation hidden_activation (hidden_act is the legacy key).
    const std::string act_key = o.has("hidden_activation") && !o.raw().at("hidden_activation").is_null()
                                    ? "hidden_activation" : "hidden_act";
    m["activation"] = gated_activation(o.opt_string(act_key).value_or(fam->act_default), o, act_key);
    m["norm"] = "rmsnorm";
    m["position"] = "rope";
    m["tied_embeddings"] = o.opt_bool("tie_word_embeddings").value_or(
        nested ? top.opt_bool("tie_word_embeddings").value_or(fam->tied_default) : fam->tied_default);
    const bool bias = o.opt_bool("attention_bias").value_or(false) || o.opt_bool("mlp_bias").value_or(false);
    m["bias"] = bias;
    if (fam->qkv_bias)
        out.notes.push_back("q/k/v projection biases (" + std::to_string((heads + 2 * m["kv_heads"].get<long long>()) *
                                                                         m.value("head_dim", hidden / heads)) +
                            " parameters a layer) are not priced: podsim's bias switch covers every linear layer");
    double dropout = 0;
    for (const char* k : {"attention_dropout", "hidden_dropout", "resid_pdrop", "embd_pdrop"})
        if (o.has(k) && !o.raw().at(k).is_null()) dropout = std::max(dropout, o.number_in(k, 0, 1));
    m["dropout"] = dropout > 0;

    // --- experts ---
    Json moe;
    if (type == "mixtral") {
        moe["experts"] = o.int_in("num_local_experts", 1, limits::max_experts);
        moe["top_k"] = o.int_in("num_experts_per_tok", 1, limits::max_experts);
        moe["expert_ffn_hidden"] = ffn;
    } else if (type == "qwen2_moe" || type == "qwen3_moe") {
        const long long e_ffn = o.int_in("moe_intermediate_size", 1, limits::max_ffn_hidden);
        moe["experts"] = o.int_in("num_experts", 1, limits::max_experts);
        moe["top_k"] = o.int_in("num_experts_per_tok", 1, limits::max_experts);
        moe["expert_ffn_hidden"] = e_ffn;
        moe["every"] = o.int_in("decoder_sparse_step", 1, limits::max_layers, 1);
        if (type == "qwen2_moe") {
            const long long shared = o.int_in("shared_expert_intermediate_size", 0, limits::max_ffn_hidden, 0);
            if (shared % e_ffn != 0)
                o.fail("shared_expert_intermediate_size", "a multiple of moe_intermediate_size (podsim counts shared "
                                                          "experts in units of one expert)");
            moe["shared_experts"] = shared / e_ffn;
            if (shared > 0) out.notes.push_back("the shared expert's gate (one scalar a token) is not priced");
        }
        // mlp_only_layers: dense layers among sparse ones; podsim's MoE layout has leading dense layers only.
        if (o.has("mlp_only_layers")) {
            const Json& d = o.array("mlp_only_layers");
            for (size_t i = 0; i < d.size(); ++i)
                if (!d[i].is_number_integer() || d[i].get<long long>() != static_cast<long long>(i))
                    o.fail("mlp_only_layers", "empty or the first layers in order (0, 1, ...): podsim places dense "
                                              "layers before the MoE ones");
            if (!d.empty()) moe["first_dense_layers"] = d.size();
        }
    } else if (deepseek) {
        moe["experts"] = o.int_in("n_routed_experts", 1, limits::max_experts);
        moe["top_k"] = o.int_in("num_experts_per_tok", 1, limits::max_experts);
        moe["expert_ffn_hidden"] = o.int_in("moe_intermediate_size", 1, limits::max_ffn_hidden);
        moe["shared_experts"] = o.int_in("n_shared_experts", 0, limits::max_experts, 0);
        moe["first_dense_layers"] = o.int_in("first_k_dense_replace", 0, limits::max_layers, 0);
        moe["every"] = o.int_in("moe_layer_freq", 1, limits::max_layers, 1);
        if (o.opt_int("topk_group").value_or(0) > 0 && o.opt_int("n_group").value_or(0) > 1)
            out.notes.push_back("group-limited routing (n_group " + std::to_string(*o.opt_int("n_group")) +
                                ", topk_group " + std::to_string(*o.opt_int("topk_group")) +
                                ") is how DeepSeek limits a token's nodes; set moe.nodes_per_token for the plan's nodes");
        Json mla;
        mla["q_lora_rank"] = o.has("q_lora_rank") && !o.raw().at("q_lora_rank").is_null()
                                 ? o.int_in("q_lora_rank", 0, limits::max_hidden) : 0;
        mla["kv_lora_rank"] = o.int_in("kv_lora_rank", 1, limits::max_hidden);
        mla["rope_head_dim"] = o.int_in("qk_rope_head_dim", 1, limits::max_head_dim);
        mla["v_head_dim"] = o.int_in("v_head_dim", 1, limits::max_head_dim);
        m["mla"] = mla;
        if (const long long mtp = o.opt_int("num_nextn_predict_layers").value_or(0); mtp > 0)
            out.notes.push_back("the " + std::to_string(mtp) + " multi-token-prediction module(s) are not priced "
                                "(DeepSeek-V3's published 671B excludes its 14B MTP module)");
    }
    if (!moe.is_null()) m["moe"] = moe;

    // --- attention that podsim prices as full causal attention ---
    const auto window = o.has("sliding_window") && o.raw().at("sliding_window").is_number()
                            ? o.raw().at("sliding_window").get<double>() : 0.0;
    // Qwen configs carry a sliding_window that applies only with use_sliding_window (default false).
    const bool qwen = type.rfind("qwen", 0) == 0;
    const bool window_used = window > 0 && window < seq_len &&
                             (!qwen || o.opt_bool("use_sliding_window").value_or(false));
    if (window_used)
        out.notes.push_back("sliding-window attention (" + std::to_string(static_cast<long long>(window)) +
                            " tokens" + (type.rfind("gemma", 0) == 0 ? ", on alternate layers" : "") +
                            ") is priced as full causal attention over the sequence: an upper bound on its cost");
    if (!o.raw().value("attn_logit_softcapping", Json()).is_null())
        out.notes.push_back("attention logit soft-capping (Gemma 2) needs an attention kernel that supports it; "
                            "podsim prices the flash kernel");
    const long long max_pos = o.opt_int("max_position_embeddings").value_or(0);
    if (max_pos > 0 && seq_len > max_pos)
        out.notes.push_back("seq_len " + std::to_string(seq_len) + " is beyond the config's max_position_embeddings " +
                            std::to_string(max_pos));
    return out;
}

// --- Megatron-LM ----------------------------------------------------------------------------------------------------
// Names and defaults from megatron/training/arguments.py and core/transformer/transformer_config.py
// (NVIDIA/Megatron-LM d98e8a6): --ffn-hidden-size defaults to 4 x hidden, or int(4 h x 2/3 / 64) x 64 with --swiglu;
// --num-query-groups counts with --group-query-attention; --kv-channels is the head dimension (default hidden /
// heads); biases on unless --disable-bias-linear; dropout 0.1 unless set; LayerNorm unless --normalization RMSNorm;
// learned absolute positions unless --position-embedding-type rope; --moe-router-topk 2; --moe-ffn-hidden-size
// defaults to --ffn-hidden-size.
ImportedModel import_megatron_args(const std::vector<std::string>& args, const std::string& name) {
    const std::string file = "megatron arguments";
    std::map<std::string, std::string> v;
    std::vector<std::string> ignored;
    static const std::vector<std::string> switches = {"--swiglu", "--untie-embeddings-and-output-weights",
                                                      "--disable-bias-linear", "--group-query-attention",
                                                      "--use-rotary-position-embeddings", "--squared-relu"};
    static const std::vector<std::string> valued = {
        "--num-layers", "--hidden-size", "--ffn-hidden-size", "--num-attention-heads", "--num-query-groups",
        "--kv-channels", "--seq-length", "--max-position-embeddings", "--vocab-size", "--padded-vocab-size",
        "--normalization", "--position-embedding-type", "--attention-dropout", "--hidden-dropout", "--num-experts",
        "--moe-router-topk", "--moe-ffn-hidden-size", "--moe-shared-expert-intermediate-size", "--moe-layer-freq",
        "--q-lora-rank", "--kv-lora-rank", "--qk-head-dim", "--qk-pos-emb-head-dim", "--v-head-dim",
        "--multi-latent-attention"};
    for (size_t i = 0; i < args.size(); ++i) {
        std::string a = args[i], val;
        if (a.rfind("--", 0) != 0) throw InputError(file, "$", "expected a --flag, got \"" + a + "\"");
        if (auto eq = a.find('='); eq != std::string::npos) val = a.substr(eq + 1), a = a.substr(0, eq);
        const bool is_switch = std::find(switches.begin(), switches.end(), a) != switches.end() ||
                               a == "--multi-latent-attention";
        if (is_switch) {
            v[a] = "1";
            continue;
        }
        if (val.empty() && i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0) val = args[++i];
        if (std::find(valued.begin(), valued.end(), a) != valued.end()) {
            if (val.empty()) throw InputError(file, a, "expected a value after " + a);
            v[a] = val;
        } else {
            ignored.push_back(a);
        }
    }
    auto num = [&](const std::string& k, long long lo, long long hi) -> std::optional<long long> {
        auto it = v.find(k);
        if (it == v.end()) return std::nullopt;
        try {
            size_t used = 0;
            const long long x = std::stoll(it->second, &used);
            if (used != it->second.size() || x < lo || x > hi) throw std::out_of_range("range");
            return x;
        } catch (const std::exception&) {
            throw InputError(file, k, "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                                          "], got \"" + it->second + "\"");
        }
    };
    auto need = [&](const std::string& k, long long lo, long long hi) {
        auto x = num(k, lo, hi);
        if (!x) throw InputError(file, k, "missing: podsim needs " + k + " to size the model");
        return *x;
    };
    ImportedModel out;
    out.family = "megatron";
    Json& m = out.model;
    m["name"] = name;
    const long long hidden = need("--hidden-size", 1, limits::max_hidden);
    const long long heads = need("--num-attention-heads", 1, limits::max_heads);
    m["layers"] = need("--num-layers", 1, limits::max_layers);
    m["hidden"] = hidden;
    m["heads"] = heads;
    m["kv_heads"] = v.count("--group-query-attention") ? need("--num-query-groups", 1, limits::max_heads) : heads;
    if (auto kv = num("--kv-channels", 1, limits::max_head_dim)) m["head_dim"] = *kv;
    const bool swiglu = v.count("--swiglu") > 0;
    const long long ffn_default = swiglu ? static_cast<long long>(4.0 * hidden * 2 / 3 / 64) * 64 : 4 * hidden;
    m["ffn_hidden"] = num("--ffn-hidden-size", 1, limits::max_ffn_hidden).value_or(ffn_default);
    if (!v.count("--ffn-hidden-size"))
        out.notes.push_back("ffn_hidden = " + std::to_string(ffn_default) + " (Megatron-LM's default for this hidden size)");
    m["seq_len"] = need("--seq-length", 1, limits::max_seq_len);
    // The tokenizer decides the vocabulary in Megatron-LM; the import needs it stated.
    auto vocab = num("--padded-vocab-size", 1, limits::max_vocab);
    if (!vocab) vocab = num("--vocab-size", 1, limits::max_vocab);
    if (!vocab) throw InputError(file, "--vocab-size", "missing: Megatron-LM takes the vocabulary from the tokenizer; "
                                                      "give --vocab-size (padded to a multiple of 128 x TP as Megatron does)");
    m["vocab"] = *vocab;
    m["activation"] = swiglu ? "swiglu" : v.count("--squared-relu") ? "squared_relu" : "gelu";
    if (v.count("--normalization")) {
        const std::string n = v["--normalization"];
        if (n != "RMSNorm" && n != "LayerNorm") throw InputError(file, "--normalization", "expected RMSNorm or LayerNorm");
        m["norm"] = n == "RMSNorm" ? "rmsnorm" : "layernorm";
    } else {
        m["norm"] = "layernorm";
    }
    const std::string pos = v.count("--position-embedding-type") ? v["--position-embedding-type"]
                            : v.count("--use-rotary-position-embeddings") ? "rope" : "learned_absolute";
    if (pos != "rope" && pos != "learned_absolute" && pos != "none" && pos != "yarn" && pos != "mrope")
        throw InputError(file, "--position-embedding-type", "expected learned_absolute, rope, yarn, mrope or none");
    m["position"] = pos == "learned_absolute" ? "learned" : pos == "none" ? "none" : "rope";
    m["tied_embeddings"] = v.count("--untie-embeddings-and-output-weights") == 0;
    m["bias"] = v.count("--disable-bias-linear") == 0;
    auto frac = [&](const std::string& k) {
        if (!v.count(k)) return 0.1;  // Megatron-LM's default dropout
        try {
            return std::stod(v[k]);
        } catch (const std::exception&) {
            throw InputError(file, k, "expected a number");
        }
    };
    m["dropout"] = frac("--attention-dropout") > 0 || frac("--hidden-dropout") > 0;
    if (auto e = num("--num-experts", 1, limits::max_experts)) {
        Json moe;
        moe["experts"] = *e;
        moe["top_k"] = num("--moe-router-topk", 1, limits::max_experts).value_or(2);
        const long long e_ffn = num("--moe-ffn-hidden-size", 1, limits::max_ffn_hidden).value_or(m["ffn_hidden"].get<long long>());
        moe["expert_ffn_hidden"] = e_ffn;
        if (auto sh = num("--moe-shared-expert-intermediate-size", 1, limits::max_ffn_hidden)) {
            if (*sh % e_ffn != 0)
                throw InputError(file, "--moe-shared-expert-intermediate-size", "expected a multiple of the expert size");
            moe["shared_experts"] = *sh / e_ffn;
        }
        if (v.count("--moe-layer-freq")) {
            auto f = num("--moe-layer-freq", 1, limits::max_layers);  // an integer; pattern lists are not read
            moe["every"] = *f;
        }
        m["moe"] = moe;
    }
    if (v.count("--multi-latent-attention")) {
        Json mla;
        mla["q_lora_rank"] = num("--q-lora-rank", 0, limits::max_hidden).value_or(0);
        mla["kv_lora_rank"] = need("--kv-lora-rank", 1, limits::max_hidden);
        mla["rope_head_dim"] = need("--qk-pos-emb-head-dim", 1, limits::max_head_dim);
        mla["v_head_dim"] = need("--v-head-dim", 1, limits::max_head_dim);
        m["head_dim"] = need("--qk-head-dim", 1, limits::max_head_dim);
        m["mla"] = mla;
    }
    if (!ignored.empty()) {
        std::string list;
        for (const auto& a : ignored) list += (list.empty() ? "" : " ") + a;
        out.notes.push_back("not model properties, ignored here (the plan is searched): " + list);
    }
    return out;
}

// --- MaxText --------------------------------------------------------------------------------------------------------

namespace {

std::string trim(const std::string& s) {
    size_t a = 0, b = s.size();
    while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
    while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
    return s.substr(a, b - a);
}

// One flat YAML scalar or flow list, as JSON: numbers (with _ separators), true/false, quoted or bare strings.
Json yaml_value(std::string s) {
    s = trim(s);
    if (s.empty()) return Json();
    if (s.front() == '[' && s.back() == ']') {
        Json a = Json::array();
        std::stringstream ss(s.substr(1, s.size() - 2));
        std::string item;
        while (std::getline(ss, item, ','))
            if (!trim(item).empty()) a.push_back(yaml_value(item));
        return a;
    }
    if ((s.front() == '"' && s.back() == '"' && s.size() >= 2) || (s.front() == '\'' && s.back() == '\'' && s.size() >= 2))
        return s.substr(1, s.size() - 2);
    std::string lower;
    for (char c : s) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == "true") return true;
    if (lower == "false") return false;
    if (lower == "null" || lower == "~") return Json();
    std::string digits;
    for (char c : s)
        if (c != '_') digits += c;
    try {
        size_t used = 0;
        if (digits.find_first_of(".eE") == std::string::npos) {
            const long long x = std::stoll(digits, &used);
            if (used == digits.size()) return x;
        } else {
            const double x = std::stod(digits, &used);
            if (used == digits.size()) return x;
        }
    } catch (const std::exception&) {
    }
    return s;
}

}  // namespace

ImportedModel import_maxtext_yaml(const std::string& text, const std::string& file, long long seq_len,
                                  const std::string& name) {
    Json j = Json::object();
    std::stringstream ss(text);
    std::string line;
    int n = 0;
    while (std::getline(ss, line)) {
        ++n;
        // Strip a comment that is not inside quotes.
        bool in_q = false;
        char q = 0;
        for (size_t i = 0; i < line.size(); ++i) {
            const char c = line[i];
            if (in_q && c == q) in_q = false;
            else if (!in_q && (c == '"' || c == '\'')) in_q = true, q = c;
            else if (!in_q && c == '#') {
                line = line.substr(0, i);
                break;
            }
        }
        if (trim(line).empty()) continue;
        if (std::isspace(static_cast<unsigned char>(line[0])) || trim(line).rfind("- ", 0) == 0)
            throw InputError(file, "line " + std::to_string(n),
                             "a flat \"key: value\" line (MaxText model configs are flat; nested YAML is not read)");
        const auto colon = line.find(':');
        if (colon == std::string::npos) throw InputError(file, "line " + std::to_string(n), "expected \"key: value\"");
        j[trim(line.substr(0, colon))] = yaml_value(line.substr(colon + 1));
    }
    // Defaults: src/maxtext/configs/base.yml (maxtext e591f30).
    auto get = [&](const char* k, Json dflt) { return j.contains(k) && !j[k].is_null() ? j[k] : dflt; };
    JsonObject o(j, file, "$");
    auto integer = [&](const char* k, long long dflt, long long lo, long long hi) {
        const Json v = get(k, dflt);
        if (!v.is_number_integer() || v.get<long long>() < lo || v.get<long long>() > hi)
            o.fail(k, "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
        return v.get<long long>();
    };
    ImportedModel out;
    out.family = "maxtext";
    Json& m = out.model;
    m["name"] = name;
    m["hidden"] = integer("base_emb_dim", 2048, 1, limits::max_hidden);
    m["heads"] = integer("base_num_query_heads", 16, 1, limits::max_heads);
    m["kv_heads"] = integer("base_num_kv_heads", 16, 1, limits::max_heads);
    m["layers"] = integer("base_num_decoder_layers", 16, 1, limits::max_layers);
    m["head_dim"] = integer("head_dim", 128, 1, limits::max_head_dim);
    const long long mlp = integer("base_mlp_dim", 7168, 1, limits::max_ffn_hidden);
    m["ffn_hidden"] = mlp;
    m["vocab"] = integer("vocab_size", 32000, 1, limits::max_vocab);
    m["seq_len"] = seq_len;
    const Json acts = get("mlp_activations", Json::array({"silu", "linear"}));
    if (!acts.is_array() || acts.empty() || !acts[0].is_string()) o.fail("mlp_activations", "a list of activation names");
    const std::string a0 = acts[0].get<std::string>();
    const bool gated = acts.size() == 2;
    if (gated) m["activation"] = a0 == "silu" ? "swiglu" : a0.rfind("gelu", 0) == 0 ? "geglu" : "";
    else m["activation"] = a0 == "relu" ? "relu" : a0.rfind("gelu", 0) == 0 ? "gelu" : "";
    if (m["activation"] == "") o.fail("mlp_activations", "silu/gelu (gated, two entries) or relu/gelu (one)");
    m["norm"] = "rmsnorm";
    m["position"] = "rope";
    m["tied_embeddings"] = get("logits_via_embedding", false).get<bool>();
    m["bias"] = false;
    m["dropout"] = get("enable_dropout", true).get<bool>() && get("dropout_rate", 0.0).get<double>() > 0;
    const long long experts = integer("num_experts", 1, 1, limits::max_experts);
    if (experts > 1) {
        Json moe;
        moe["experts"] = experts;
        moe["top_k"] = integer("num_experts_per_tok", 1, 1, limits::max_experts);
        const long long e_ffn = integer("base_moe_mlp_dim", mlp, 1, limits::max_ffn_hidden);
        moe["expert_ffn_hidden"] = e_ffn;
        moe["shared_experts"] = integer("shared_experts", 0, 0, limits::max_experts);
        moe["first_dense_layers"] = integer("first_num_dense_layers", 0, 0, limits::max_layers);
        moe["every"] = integer("interleave_moe_layer_step", 1, 1, limits::max_layers);
        m["moe"] = moe;
    }
    if (get("attention_type", "global") == "mla") {
        Json mla;
        mla["q_lora_rank"] = integer("q_lora_rank", 0, 0, limits::max_hidden);
        mla["kv_lora_rank"] = integer("kv_lora_rank", 512, 1, limits::max_hidden);
        mla["rope_head_dim"] = integer("qk_rope_head_dim", 64, 1, limits::max_head_dim);
        mla["v_head_dim"] = integer("v_head_dim", 128, 1, limits::max_head_dim);
        m["head_dim"] = integer("qk_nope_head_dim", 128, 1, limits::max_head_dim);
        m["kv_heads"] = m["heads"];
        m["mla"] = mla;
    } else if (get("attention_type", "global") != "global" && get("attention_type", "global") != "full") {
        out.notes.push_back("attention_type " + get("attention_type", "").get<std::string>() +
                            " is priced as full causal attention");
    }
    return out;
}

}  // namespace podsim
