// A dense decoder-only transformer: its shape and exact parameter count.
#pragma once
#include <string>

#include "hardware/json_reader.hpp"

namespace podsim {

enum class Activation { gelu, relu, squared_relu, swiglu, geglu };
enum class Norm { layernorm, rmsnorm };
enum class Position { learned, rope, none };

// Mixture of experts (GShard/Switch/GLaM, Mixtral, DeepSeek-V3): which layers route their MLP to experts.
struct MoeSpec {
    int experts = 0;                 // routed experts per MoE layer; 0 = dense model
    int top_k = 1;                   // experts each token is sent to
    int shared_experts = 0;          // always-on experts (DeepSeek), each of expert_ffn_hidden
    long long expert_ffn_hidden = 0; // per expert
    int every = 1;                   // an MoE layer every `every` layers (GLaM, Switch: 2), after the first dense ones
    int first_dense_layers = 0;      // DeepSeek-V3: the first 3 layers are dense
    double capacity_factor = 0;      // 0: dropless; > 0: an expert takes at most cf x its mean share, the rest drop
    double load_imbalance = 1;       // routing skew: tokens at the busiest expert rank / the mean (>= 1)
    int nodes_per_token = 0;         // node-limited routing (DeepSeek-V3: 4): a token crosses the network to at most
                                     // this many nodes, then NVLink forwards it to its experts; 0: no limit
    double dispatch_bytes = 2;       // bytes per element sent in the dispatch (DeepSeek-V3: 1, FP8); combine: 2
    bool enabled() const { return experts > 0; }
};

// Multi-head latent attention (DeepSeek-V2/V3): low-rank query and key-value projections, a decoupled RoPE part.
struct MlaSpec {
    long long q_lora_rank = 0;   // 0: queries projected directly
    long long kv_lora_rank = 0;  // > 0: MLA
    long long rope_head_dim = 0; // decoupled RoPE dimension of queries and the shared key
    long long v_head_dim = 0;    // value head dimension (head_dim is the no-RoPE query/key dimension)
    bool enabled() const { return kv_lora_rank > 0; }
};

struct ModelSpec {
    std::string name;
    int layers = 0;
    long long hidden = 0;
    long long ffn_hidden = 0;
    int heads = 0;
    int kv_heads = 0;     // == heads: MHA; 1: MQA; otherwise GQA
    long long head_dim = 0;
    long long vocab = 0;
    long long seq_len = 0;
    Activation activation = Activation::gelu;
    Norm norm = Norm::layernorm;
    Position position = Position::learned;
    bool parallel_block = false;   // PaLM: attention and MLP read the same normalized input
    bool tied_embeddings = false;
    bool bias = true;
    bool dropout = true;           // stores dropout masks (GPT-3 style); Llama-style models train without
    MoeSpec moe;
    MlaSpec mla;

    bool gated() const { return activation == Activation::swiglu || activation == Activation::geglu; }
    long long q_width() const { return static_cast<long long>(heads) * head_dim; }
    long long kv_width() const { return static_cast<long long>(kv_heads) * head_dim; }

    long long qk_head_dim() const { return head_dim + (mla.enabled() ? mla.rope_head_dim : 0); }
    long long v_dim() const { return mla.enabled() ? mla.v_head_dim : head_dim; }

    bool is_moe_layer(int i) const;
    int moe_layers_in(int first, int count) const;   // MoE layers among layers [first, first + count)
    double attention_params() const;                 // one layer's attention block with its norm(s)
    double dense_layer_params() const;               // a layer with a dense MLP of ffn_hidden
    double expert_params() const;                    // one expert's MLP
    double moe_layer_params() const;                 // attention, router, routed and shared experts
    double routed_expert_params_in(int first, int count) const;  // the part expert parallelism shards
    double layers_params(int first, int count) const;
    double params_per_layer() const;    // mean over the layers (all alike for a dense model)
    double embedding_params() const;    // input embedding (+ learned positions)
    double output_params() const;       // untied output projection (0 if tied) + final norm
    double total_params() const;
    double active_params() const;       // per token: routed experts counted top_k times, not all of them
};

ModelSpec model_from_json(const JsonObject& o);
// The shape fields a scenario and a published run share (layers .. seq_len), each checked against its range
// (hardware/limits.hpp); head_dim defaults to hidden / heads and kv_heads to heads.
void read_shape(const JsonObject& o, ModelSpec& m);
// The "moe" and "mla" objects of a model (scenario or published run); `model` is where kv_heads lives.
void read_moe(const JsonObject& moe, ModelSpec& m);
void read_mla(const JsonObject& mla, const JsonObject& model, ModelSpec& m);
Activation activation_from_string(const std::string& s);
const char* to_string(Activation a);

}  // namespace podsim
