// Memory per device: weights, gradients, optimizer states, activations in flight, and the verdict against HBM.
#pragma once
#include <string>

#include "hardware/chip.hpp"
#include "models/plan.hpp"
#include "models/transformer.hpp"

namespace podsim {

struct MemoryBreakdown {
    double weights_bytes = 0;       // compute copy (+ FSDP gather buffers)
    double master_bytes = 0;        // fp32 master weights
    double gradients_bytes = 0;
    double optimizer_bytes = 0;     // Adam first and second moments
    double activations_bytes = 0;   // saved for backward, all micro-batches in flight on the busiest stage
    double transient_bytes = 0;     // logits / loss buffers, one layer's recomputed activations
    double workspace_bytes = 0;     // framework reserve (allocator, kernels' workspaces, communication buffers)
    double host_offload_bytes = 0;  // saved activations offloaded to host memory (not in total_bytes)
    double host_bytes = 0;          // the host memory one device may use (0: none in the catalog)
    double total_bytes = 0;
    double hbm_bytes = 0;
    bool fits = true;
};

struct MemoryInputs {
    double stage_params = 0;   // parameters on the busiest stage, before TP/ZeRO sharding
    int layers_on_stage = 0;
    double in_flight_microbatches = 1;  // layer-activation sets held at once, in units of the stage's layers
    int zero_shard = 1;        // ZeRO/FSDP sharding degree
    bool last_stage = true;    // holds the logits
    // Mixture of experts: routed expert parameters on the stage (sharded by ep x etp, their ZeRO states by the
    // expert data-parallel degree) and how many of the stage's layers are MoE layers.
    double expert_params = 0;
    int moe_layers = 0;
    int expert_zero_shard = 1;
    // Activation offload: how many of the stage's layers (and of those, MoE layers) keep their saved activations
    // in host memory, and the host memory per device.
    int offload_layers = 0;
    int offload_moe_layers = 0;
    double host_bytes_per_device = 0;
    // TorchTitan's selective recomputation (alternate_matmuls): the bytes a dense / MoE layer keeps, counted once
    // by the caller over the layer's ops (layer_ops.hpp); negative: memory_per_device counts them itself.
    double alternate_saved_bytes = -1;
    double alternate_saved_moe_bytes = -1;
};

// Activation bytes one layer saves for one micro-batch on one device (Korthikanti et al. 2022, sec. 4,
// generalized to GQA, gated MLPs and flash attention).
double layer_activation_bytes(const ModelSpec& m, const ParallelPlan& p, bool moe = false);

MemoryBreakdown memory_per_device(const ModelSpec& m, const ParallelPlan& p, const ChipSpec& chip,
                                  const MemoryInputs& in);

}  // namespace podsim
