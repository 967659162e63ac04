// Recomputation by named tensors (JAX's checkpoint policies save_only_these_names and
// save_and_offload_only_these_names, as MaxText's remat_policy builds them): a layer keeps the tensors it names, on the
// device or offloaded to host memory, and its backward recomputes from the layer input whatever else it needs.
#pragma once
#include <string>

#include "hardware/json_reader.hpp"

namespace podsim {

// The tensors a policy can name (MaxText's checkpoint_name()s in its decoder layers, base.yml): the layer input, the
// Q/K/V projections' outputs, the attention output (context), the output projection's, the MLP's up GEMM halves
// (gate and up; one matrix without gating) and its down projection's, and the routed experts' own three.
enum class RematTensor : unsigned {
    layer_input, query, key, value, context, out_proj, mlp_wi_0, mlp_wi_1, mlp_wo, moe_wi_0, moe_wi_1, moe_wo, count
};

struct RematNames {
    unsigned device = 1u << unsigned(RematTensor::layer_input);  // kept in HBM (the layer input always is, or is offloaded)
    unsigned offload = 0;                                       // kept in host memory, copied out and back by DMA
    bool kept(RematTensor t) const { return ((device | offload) >> unsigned(t)) & 1u; }
    bool offloaded(RematTensor t) const { return (offload >> unsigned(t)) & 1u; }
    bool operator==(const RematNames& o) const { return device == o.device && offload == o.offload; }
};

// MaxText's names for what is kept: "query_proj,key_proj,value_proj,out_proj" and, where any, "; offloaded: ...".
std::string to_string(const RematNames& r);
// remat_policy=custom: `o`.`key` maps MaxText tensor names (decoder_layer_input, query_proj, key_proj, value_proj,
// kv_proj, qkv_proj, context, out_proj, mlpwi, mlpwi_0, mlpwi_1, mlpwo, moe_mlpwi_0, moe_mlpwi_1, moe_mlpwo) to
// "device", "offload" or "remat"; names left out are rematerialized (MaxText's default), the layer input kept on the
// device. An unknown name or value is an error naming the path.
RematNames remat_tensors_at(const JsonObject& o, const char* key);

}  // namespace podsim
