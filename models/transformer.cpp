#include "models/transformer.hpp"

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

double ModelSpec::params_per_layer() const {
    const double h = hidden, q = q_width(), kv = kv_width(), f = ffn_hidden;
    double attn = h * (q + 2 * kv) + q * h;
    double mlp = (gated() ? 3 : 2) * h * f;
    double norms = (norm == Norm::layernorm ? 2 : 1) * h * (parallel_block ? 1 : 2);
    double biases = bias ? (q + 2 * kv) + h + (gated() ? 2 : 1) * f + h : 0;
    return attn + mlp + norms + biases;
}

double ModelSpec::embedding_params() const {
    return static_cast<double>(vocab) * hidden + (position == Position::learned ? double(seq_len) * hidden : 0);
}

double ModelSpec::output_params() const {
    const double final_norm = (norm == Norm::layernorm ? 2 : 1) * double(hidden);
    return (tied_embeddings ? 0 : double(vocab) * hidden) + final_norm;
}

double ModelSpec::total_params() const { return layers * params_per_layer() + embedding_params() + output_params(); }

ModelSpec model_from_json(const JsonObject& o) {
    o.only_keys({"name", "layers", "hidden", "ffn_hidden", "heads", "kv_heads", "head_dim", "vocab", "seq_len",
                 "activation", "norm", "position", "parallel_block", "tied_embeddings", "bias", "dropout", "notes"});
    ModelSpec m;
    m.name = o.string("name");
    m.layers = static_cast<int>(o.positive_int("layers"));
    m.hidden = o.positive_int("hidden");
    m.ffn_hidden = o.positive_int("ffn_hidden");
    m.heads = static_cast<int>(o.positive_int("heads"));
    m.kv_heads = static_cast<int>(o.has("kv_heads") ? o.positive_int("kv_heads") : m.heads);
    m.head_dim = o.has("head_dim") ? o.positive_int("head_dim") : m.hidden / m.heads;
    if (!o.has("head_dim") && m.hidden % m.heads != 0)
        o.fail("head_dim", "missing, and hidden is not a multiple of heads");
    if (m.heads % m.kv_heads != 0) o.fail("kv_heads", "expected a divisor of heads (" + std::to_string(m.heads) + ")");
    m.vocab = o.positive_int("vocab");
    m.seq_len = o.positive_int("seq_len");
    m.activation = activation_from_string(o.one_of("activation", {"gelu", "relu", "squared_relu", "swiglu", "geglu"}));
    if (o.has("norm")) m.norm = o.one_of("norm", {"layernorm", "rmsnorm"}) == "layernorm" ? Norm::layernorm : Norm::rmsnorm;
    if (o.has("position")) {
        auto p = o.one_of("position", {"learned", "rope", "none"});
        m.position = p == "learned" ? Position::learned : p == "rope" ? Position::rope : Position::none;
    }
    m.parallel_block = o.opt_bool("parallel_block").value_or(false);
    m.tied_embeddings = o.opt_bool("tied_embeddings").value_or(false);
    m.bias = o.opt_bool("bias").value_or(true);
    m.dropout = o.opt_bool("dropout").value_or(true);
    return m;
}

}  // namespace podsim
