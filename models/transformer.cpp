#include "models/transformer.hpp"

#include <filesystem>

#include "models/model_import.hpp"

#include "hardware/limits.hpp"

namespace podsim {

Activation activation_from_string(const std::string& s) {
    if (s == "gelu") return Activation::gelu;
    if (s == "relu") return Activation::relu;
    if (s == "squared_relu") return Activation::squared_relu;
    if (s == "swiglu") return Activation::swiglu;
    if (s == "geglu") return Activation::geglu;
    throw std::invalid_argument(s);
}

const char* to_string(Activation a) {
    switch (a) {
        case Activation::gelu: return "gelu";
        case Activation::relu: return "relu";
        case Activation::squared_relu: return "squared_relu";
        case Activation::swiglu: return "swiglu";
        case Activation::geglu: return "geglu";
    }
    return "?";
}

bool ModelSpec::is_moe_layer(int i) const {
    return moe.enabled() && i >= moe.first_dense_layers && (i - moe.first_dense_layers) % moe.every == moe.every - 1;
}

int ModelSpec::moe_layers_in(int first, int count) const {
    int n = 0;
    for (int i = first; i < first + count; ++i) n += is_moe_layer(i);
    return n;
}

double ModelSpec::attention_params() const {
    const double h = hidden, heads_d = heads;
    double attn;
    if (mla.enabled()) {
        // MLA: queries via a rank-q_lora bottleneck (or directly), keys/values from one rank-kv_lora latent plus a
        // shared RoPE key; the latents are normalized (DeepSeek-V2, sec. 2.1).
        const double qk = double(head_dim + mla.rope_head_dim);
        const double q = mla.q_lora_rank > 0 ? h * mla.q_lora_rank + mla.q_lora_rank * heads_d * qk + mla.q_lora_rank
                                             : h * heads_d * qk;
        const double kv = h * (mla.kv_lora_rank + mla.rope_head_dim) + mla.kv_lora_rank * heads_d * (head_dim + mla.v_head_dim) +
                          mla.kv_lora_rank;
        attn = q + kv + heads_d * mla.v_head_dim * h;
    } else {
        const double q = q_width(), kv = kv_width();
        attn = h * (q + 2 * kv) + q * h + (bias ? (q + 2 * kv) + h : 0);
    }
    const double norms = (norm == Norm::layernorm ? 2 : 1) * h * (parallel_block ? 1 : 2);
    return attn + norms;
}

double ModelSpec::expert_params() const {
    const double h = hidden, f = moe.expert_ffn_hidden;
    return (gated() ? 3 : 2) * h * f + (bias ? (gated() ? 2 : 1) * f + h : 0);
}

double ModelSpec::dense_layer_params() const {
    const double h = hidden, f = ffn_hidden;
    return attention_params() + (gated() ? 3 : 2) * h * f + (bias ? (gated() ? 2 : 1) * f + h : 0);
}

double ModelSpec::moe_layer_params() const {
    return attention_params() + double(hidden) * moe.experts + (moe.experts + moe.shared_experts) * expert_params();
}

double ModelSpec::routed_expert_params_in(int first, int count) const {
    return moe_layers_in(first, count) * double(moe.experts) * expert_params();
}

double ModelSpec::layers_params(int first, int count) const {
    const int moe_n = moe_layers_in(first, count);
    return moe_n * moe_layer_params() + (count - moe_n) * dense_layer_params();
}

double ModelSpec::params_per_layer() const { return layers > 0 ? layers_params(0, layers) / layers : 0; }

double ModelSpec::embedding_params() const {
    return static_cast<double>(vocab) * hidden + (position == Position::learned ? double(seq_len) * hidden : 0);
}

double ModelSpec::output_params() const {
    const double final_norm = (norm == Norm::layernorm ? 2 : 1) * double(hidden);
    return (tied_embeddings ? 0 : double(vocab) * hidden) + final_norm;
}

double ModelSpec::total_params() const { return layers_params(0, layers) + embedding_params() + output_params(); }

double ModelSpec::active_params() const {
    const double idle_experts = moe.enabled() ? double(moe.experts - moe.top_k) * expert_params() : 0;
    return total_params() - moe_layers_in(0, layers) * idle_experts;
}

void read_moe(const JsonObject& e_, ModelSpec& m) {
    const JsonObject* e = &e_;
    e->only_keys({"experts", "top_k", "shared_experts", "expert_ffn_hidden", "every", "first_dense_layers",
                      "capacity_factor", "load_imbalance", "nodes_per_token", "dispatch_bytes", "notes"});
    m.moe.experts = e->count("experts", 1, limits::max_experts);
    m.moe.top_k = e->count("top_k", 1, limits::max_experts);
    if (m.moe.top_k > m.moe.experts) e->fail("top_k", "expected at most the number of experts");
    m.moe.shared_experts = e->count("shared_experts", 0, limits::max_experts, 0);
    m.moe.expert_ffn_hidden = e->int_in("expert_ffn_hidden", 1, limits::max_ffn_hidden, m.ffn_hidden);
    m.moe.every = e->count("every", 1, limits::max_layers, 1);
    m.moe.first_dense_layers = e->count("first_dense_layers", 0, limits::max_layers, 0);
    if (m.moe.first_dense_layers >= m.layers) e->fail("first_dense_layers", "expected 0 .. layers - 1");
    m.moe.capacity_factor = e->number_in("capacity_factor", 0, 1e6, 0);
    if (m.moe.capacity_factor != 0 && m.moe.capacity_factor < 1)
        e->fail("capacity_factor", "expected 0 (dropless) or a factor >= 1");
    // The busiest expert rank holds at most every token: skew beyond the number of experts is impossible.
    m.moe.load_imbalance = e->number_in("load_imbalance", 1, double(m.moe.experts), 1);
    m.moe.nodes_per_token = e->count("nodes_per_token", 0, limits::max_chips, 0);
    m.moe.dispatch_bytes = e->opt_number("dispatch_bytes").value_or(2);
    if (m.moe.dispatch_bytes != 1 && m.moe.dispatch_bytes != 2) e->fail("dispatch_bytes", "expected 1 (fp8) or 2 (bf16)");
}

void read_mla(const JsonObject& a_, const JsonObject& o, ModelSpec& m) {
    const JsonObject* a = &a_;
    a->only_keys({"q_lora_rank", "kv_lora_rank", "rope_head_dim", "v_head_dim", "notes"});
    m.mla.q_lora_rank = a->int_in("q_lora_rank", 0, limits::max_hidden, 0);  // 0: no query compression
    m.mla.kv_lora_rank = a->int_in("kv_lora_rank", 1, limits::max_hidden);
    m.mla.rope_head_dim = a->int_in("rope_head_dim", 1, limits::max_head_dim);
    m.mla.v_head_dim = a->int_in("v_head_dim", 1, limits::max_head_dim);
    if (m.kv_heads != m.heads) o.fail("kv_heads", "MLA has one latent for all heads: leave kv_heads = heads");
}

void read_shape(const JsonObject& o, ModelSpec& m) {
    m.layers = o.count("layers", 1, limits::max_layers);
    m.hidden = o.int_in("hidden", 1, limits::max_hidden);
    m.ffn_hidden = o.int_in("ffn_hidden", 1, limits::max_ffn_hidden);
    m.heads = o.count("heads", 1, limits::max_heads);
    m.kv_heads = o.count("kv_heads", 1, limits::max_heads, m.heads);
    if (!o.has("head_dim") && m.hidden % m.heads != 0)
        o.fail("head_dim", "missing, and hidden is not a multiple of heads");
    m.head_dim = o.int_in("head_dim", 1, limits::max_head_dim, m.hidden / m.heads);
    if (m.kv_heads > m.heads || m.heads % m.kv_heads != 0)
        o.fail("kv_heads", "expected a divisor of heads (" + std::to_string(m.heads) + ")");
    m.vocab = o.int_in("vocab", 1, limits::max_vocab);
    m.seq_len = o.int_in("seq_len", 1, limits::max_seq_len);
}

namespace {

// What a scenario's model leaves out follows its family (issue #14): the architecture conventions each family's
// reference configs use. Without a family, today's common choice (Llama-style: no biases, no dropout, RMSNorm,
// RoPE), and the activation must be stated. README, "Model families", lists the same table.
struct FamilyDefaults {
    const char* id;
    Activation activation;
    Norm norm;
    Position position;
    bool bias, dropout, tied_embeddings;
};
constexpr FamilyDefaults kFamilies[] = {
    // GPT-2/GPT-3 (HF GPT2Config: biases, LayerNorm, learned positions, resid/attn/embd dropout 0.1, tied
    // embeddings; Brown et al. 2020 keep GPT-2's architecture) and Megatron-LM's GPT defaults.
    {"gpt", Activation::gelu, Norm::layernorm, Position::learned, true, true, true},
    // Llama 2/3 (HF LlamaConfig: no biases, no dropout, RMSNorm, RoPE, SwiGLU, untied), Mistral/Mixtral and Qwen2/3
    // (same conventions; Qwen2's q/k/v biases are left out), DeepSeek-V2/V3 (the same, with MLA and MoE blocks).
    {"llama", Activation::swiglu, Norm::rmsnorm, Position::rope, false, false, false},
    {"mistral", Activation::swiglu, Norm::rmsnorm, Position::rope, false, false, false},
    {"qwen", Activation::swiglu, Norm::rmsnorm, Position::rope, false, false, false},
    {"deepseek", Activation::swiglu, Norm::rmsnorm, Position::rope, false, false, false},
    // Gemma (HF GemmaConfig: GeGLU, RMSNorm, RoPE, tied embeddings, no biases, no dropout).
    {"gemma", Activation::geglu, Norm::rmsnorm, Position::rope, false, false, true},
};

}  // namespace

ModelSpec model_from_json(const JsonObject& o) {
    if (o.has("from_hf")) {
        // {"from_hf": "config.json", "seq_len": N}: a Hugging Face config, relative to the scenario's folder. The
        // training sequence length must be stated: a config gives only the longest context it supports.
        o.only_keys({"from_hf", "seq_len", "name", "notes"});
        const std::string rel = o.string("from_hf");
        const std::filesystem::path path = std::filesystem::path(rel).is_absolute()
                                               ? std::filesystem::path(rel)
                                               : std::filesystem::path(o.file()).parent_path() / rel;
        if (!std::filesystem::is_regular_file(path)) o.fail("from_hf", "a Hugging Face config.json file (" + path.string() + " is none)");
        const long long seq = o.int_in("seq_len", 1, limits::max_seq_len);
        const ImportedModel im = import_hf_config(load_json_file(path.string()), path.string(), seq,
                                                  o.opt_string("name").value_or(path.parent_path().filename().string()));
        return model_from_json(JsonObject(im.model, path.string() + " (imported)", "$"));
    }
    o.only_keys({"name", "family", "layers", "hidden", "ffn_hidden", "heads", "kv_heads", "head_dim", "vocab", "seq_len",
                 "activation", "norm", "position", "parallel_block", "tied_embeddings", "bias", "dropout", "moe", "mla",
                 "notes"});
    ModelSpec m;
    m.name = o.string("name");
    read_shape(o, m);
    const FamilyDefaults* fam = nullptr;
    if (o.has("family")) {
        const std::string f = o.one_of("family", {"gpt", "llama", "mistral", "qwen", "deepseek", "gemma"});
        for (const auto& x : kFamilies)
            if (f == x.id) fam = &x;
    }
    const FamilyDefaults& d = fam ? *fam : kFamilies[1];  // no family: Llama-style conventions
    if (o.has("activation") || !fam)  // without a family the activation must be stated: it sets the MLP's size
        m.activation = activation_from_string(o.one_of("activation", {"gelu", "relu", "squared_relu", "swiglu", "geglu"}));
    else
        m.activation = d.activation;
    m.norm = d.norm;
    if (o.has("norm")) m.norm = o.one_of("norm", {"layernorm", "rmsnorm"}) == "layernorm" ? Norm::layernorm : Norm::rmsnorm;
    m.position = d.position;
    if (o.has("position")) {
        auto p = o.one_of("position", {"learned", "rope", "none"});
        m.position = p == "learned" ? Position::learned : p == "rope" ? Position::rope : Position::none;
    }
    m.parallel_block = o.opt_bool("parallel_block").value_or(false);
    m.tied_embeddings = o.opt_bool("tied_embeddings").value_or(d.tied_embeddings);
    m.bias = o.opt_bool("bias").value_or(d.bias);
    m.dropout = o.opt_bool("dropout").value_or(d.dropout);
    if (auto e = o.opt_object("moe")) read_moe(*e, m);
    if (auto a = o.opt_object("mla")) read_mla(*a, o, m);
    return m;
}

}  // namespace podsim
