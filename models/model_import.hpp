// Bring your own model (issue #14): a Hugging Face config.json, Megatron-LM arguments or a MaxText model YAML,
// translated into podsim's scenario "model" object (the schema model_from_json reads), with notes on what the
// source has that podsim does not model. Translation only: the result goes through model_from_json's range checks
// like any hand-written model.
#pragma once
#include <string>
#include <vector>

#include "hardware/json_reader.hpp"

namespace podsim {

struct ImportedModel {
    Json model;                      // podsim's "model" object
    std::string family;              // the source's model family ("llama", "deepseek_v3", "megatron", "maxtext")
    std::vector<std::string> notes;  // what podsim leaves out or assumed, one sentence each
};

// The Hugging Face families read (config.json "model_type"): llama, mistral, mixtral, qwen2, qwen2_moe, qwen3,
// qwen3_moe, gemma, gemma2, gemma3 / gemma3_text, deepseek_v2, deepseek_v3. `seq_len` is the training sequence
// length (a config gives only the longest context, max_position_embeddings). Errors name the file and key.
ImportedModel import_hf_config(const Json& config, const std::string& file, long long seq_len, const std::string& name);
const std::vector<std::string>& hf_model_types();

// Megatron-LM model arguments ("--num-layers 32 --hidden-size 4096 ..."; megatron/training/arguments.py names):
// the model part only; arguments that set no model property are listed in the notes as ignored.
ImportedModel import_megatron_args(const std::vector<std::string>& args, const std::string& name);

// A MaxText model config (flat "key: value" YAML as in src/maxtext/configs/models/*.yml; base_* dimensions).
ImportedModel import_maxtext_yaml(const std::string& text, const std::string& file, long long seq_len,
                                  const std::string& name);

}  // namespace podsim
