// The documented range of every count and size podsim accepts (README "Input ranges"). Each bound is far above
// any model or machine built or announced (2026: ~1e13 parameters, ~1e6 accelerators, ~1e7-token contexts), and
// low enough that every product the model forms from them (tokens per step, elements per activation, ranks of a
// group) stays exact in a 64-bit integer and finite in a double. Inputs are checked against them where they are
// read, with the JSON path, so nothing downstream narrows, wraps or divides by zero.
#pragma once

namespace podsim::limits {

inline constexpr long long max_layers = 100'000;
inline constexpr long long max_hidden = 1LL << 20;          // model width (1,048,576)
inline constexpr long long max_ffn_hidden = 1LL << 24;      // MLP width, dense or per expert
inline constexpr long long max_heads = 1LL << 16;           // attention heads (and KV heads)
inline constexpr long long max_head_dim = 1LL << 14;        // per-head width (and MLA ranks)
inline constexpr long long max_vocab = 1LL << 24;           // 16.8M tokens
inline constexpr long long max_seq_len = 1LL << 24;         // 16.8M-token context
inline constexpr long long max_experts = 1LL << 16;         // routed (or shared) experts per MoE layer
inline constexpr long long max_chips = 1LL << 22;           // accelerators in one system (4,194,304)
inline constexpr long long max_parallel_degree = max_chips; // dp, tp, pp, vpp, cp, ep, etp each
inline constexpr long long max_global_batch_seqs = 1LL << 32;  // sequences per optimizer step
inline constexpr long long max_slices = 1LL << 14;          // TPU slices joined over DCN
inline constexpr double max_tokens = 1e18;                  // a token budget or claim (1e5 x Llama 3's 15.6T)
inline constexpr double max_params = 1e16;                  // parameters (a claim)
inline constexpr double max_days = 36'525;                  // 100 years

// Defaults of the resource budget a simulation may use (--max-tasks, --max-memory): the largest plans shipped
// (Megatron 1T: 130k tasks; interleaved DeepSeek-V3: ~0.6M) fit with room, a plan beyond them is refused before
// anything is allocated.
inline constexpr long long default_max_tasks = 20'000'000;
inline constexpr double default_max_memory_bytes = 4.0 * (1LL << 30);

}  // namespace podsim::limits
