// A dense decoder-only transformer: its shape and exact parameter count.
#pragma once
#include <string>

#include "hardware/json_reader.hpp"

namespace podsim {

enum class Activation { gelu, relu, squared_relu, swiglu, geglu };
enum class Norm { layernorm, rmsnorm };
enum class Position { learned, rope, none };

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

    bool gated() const { return activation == Activation::swiglu || activation == Activation::geglu; }
    long long q_width() const { return static_cast<long long>(heads) * head_dim; }
    long long kv_width() const { return static_cast<long long>(kv_heads) * head_dim; }

    double params_per_layer() const;
    double embedding_params() const;    // input embedding (+ learned positions)
    double output_params() const;       // untied output projection (0 if tied) + final norm
    double total_params() const;
};

ModelSpec model_from_json(const JsonObject& o);
Activation activation_from_string(const std::string& s);
const char* to_string(Activation a);

}  // namespace podsim
