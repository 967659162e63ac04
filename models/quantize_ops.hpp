// Low-precision GEMMs: which number format each GEMM runs in per precision and pass, and the ops a recipe adds
// to make its operands (quantize / cast kernels, amax reductions), so that the op list shows what they cost.
//
//   precision  forward  dgrad  wgrad  recipe (source)
//   fp8        fp8      fp8    fp8    Transformer Engine: delayed, tensorwise (current) or blockwise scaling
//   int8       int8     int8   b16    AQT as MaxText runs it (quantization=int8: fwd_bits=8, dlhs_bits=8,
//                                     drhs_bits=None, MaxText/layers/quantizations.py)
//   fp4        fp4      fp4    fp4    NVFP4 (NVIDIA 2025, arXiv:2509.25149; TE NVFP4BlockScaling): all three GEMMs
//                                     consume NVFP4 operands, the wgrad's through a 16x16 random Hadamard transform
//
// Embedding, logits, router and the attention core stay 16-bit in every recipe.
#pragma once
#include <vector>

#include "models/layer_ops.hpp"
#include "models/plan.hpp"

namespace podsim {

// The format a quantizable GEMM (a linear layer) runs in under plan `p` in `pass`.
NumFormat gemm_format(const ParallelPlan& p, OpPass pass);
// HBM bytes per operand element in format `f` under plan `p`, block scales included.
double operand_bytes(NumFormat f, const ParallelPlan& p);

// Inserts the quantize ops of every low-precision GEMM of a layer's forward, recompute and backward lists (before
// the GEMM that first reads them), and the per-GEMM amax all-reduces of recipes that have them. Nothing for 16-bit
// plans.
void add_quantize_ops(LayerOps& L, const ParallelPlan& p);

// Ops once per model chunk and micro-batch, each pass: delayed scaling's amax reduction when its autocast region
// closes (Transformer Engine's FP8GlobalStateManager.reduce_and_update_fp8_tensors) and its amax-history update.
// `gemms`: the low-precision GEMMs the region holds. Empty for every other recipe and precision.
LayerOps chunk_ops(const ParallelPlan& p, double gemms);

// Low-precision GEMMs in a list of ops.
int low_precision_gemms(const std::vector<Op>& ops);

}  // namespace podsim
