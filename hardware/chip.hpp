// One accelerator chip: peak rates, memory, interconnect and the stated efficiencies the simulator applies.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hardware/json_reader.hpp"

namespace podsim {

enum class ChipKind { tpu, gpu, cpu };  // cpu: the calibration host, described like a GPU

// The achievable fractions of peak that the simulator applies when no calibration profile matches.
struct ChipEfficiency {
    double matmul_peak_fraction = 0;      // best large GEMM / peak (e.g. MAMF)
    double matmul_half_dim = 0;           // min(M,N,K) at which a GEMM reaches half of the above
    double fp8_matmul_peak_fraction = 0;  // the same against the fp8 peak (0: chip has no fp8)
    double attention_peak_fraction = 0;   // fused (flash) attention forward / bf16 peak
    // The FlashAttention-2 kernel on this chip / bf16 peak, where it is not the chip's own fused kernel (Hopper:
    // warp-level MMA, no wgmma/TMA). Absent in the JSON: attention_peak_fraction (Ampere, where it is the kernel;
    // Blackwell, where the stacks that would run it ask SDPA for cuDNN first; TPUs).
    double flash2_attention_peak_fraction = 0;
    // The flash backward's FLOP rate / its forward's: the backward recomputes the scores, runs five GEMM-sized
    // products to the forward's two and accumulates dQ across key blocks, so it reaches a lower fraction of peak.
    // Absent in the JSON: 1 (no measured figure; the backward at the forward's rate).
    double attention_backward_rate = 1;
    double memory_bw_fraction = 0;        // streaming kernels / HBM peak
    double kernel_overhead_s = 0;         // fixed cost per kernel launch (GPU) or fused op (TPU)
    double collective_bw_fraction = 0;    // achievable collective bus bandwidth / link peak
    double comm_interference_fraction = 0;  // compute slowdown per second of communication overlapped with it
    // A GEMM's output tiles are written after their K loop with the tensor cores idle (true: one tile per thread
    // block, Ampere's CUTLASS 2.x kernels), or under the next tile's K loop (false: persistent kernels,
    // Hopper on; TPUs' pipelined output copies). "gemm_epilogue" in the chip file: "serial" or "overlapped".
    bool gemm_epilogue_serial = false;
};

// How a TPU generation's slices are named and shaped (Cloud accelerator types).
struct TpuSliceRules {
    std::string type_prefix;              // "v4" in "v4-2048"
    bool type_counts_cores = false;       // v4/v5p types count TensorCores (2 per chip)
    int cores_per_chip = 1;
    int chips_per_host = 4;
    int max_slice_chips = 0;
    std::string wraparound;               // "cube4": torus on dims that are multiples of 4 (whole 4x4x4 cubes); "axis16": only axes of 16
    double dcn_bytes_per_s_per_chip = 0;  // data-center network share of one chip, one direction
    double dcn_latency_s = 0;
    // The data-center fabric between slices is shared: with S slices exchanging at once, each chip gets
    // dcn_bytes_per_s_per_chip / (1 + (S - 1) / dcn_contention_slices) (fitted: see the chip file's source).
    double dcn_contention_slices = 0;     // 0: no contention modelled
    double dcn_effective_bytes_per_s_per_chip(int slices) const {
        return dcn_contention_slices > 0 ? dcn_bytes_per_s_per_chip / (1 + (slices - 1) / dcn_contention_slices)
                                         : dcn_bytes_per_s_per_chip;
    }
    std::map<int, std::vector<int>> shapes;  // chips -> torus dims
    std::string runtime_version;             // TPU VM software version for JAX/PyTorch (gcloud --runtime-version)
    int host_vcpus = 0;                      // vCPUs of one TPU VM host (input pipelines); 0 = not in the catalog
};

// A measured or fitted GEMM efficiency for one precision class ("16bit" or "fp8"), overriding the stated default.
struct EfficiencyProfile {
    std::string precision;           // "16bit" (fp16/bf16) or "fp8"
    double matmul_peak_fraction = 0;
    std::string file;
    std::string method;              // how it was made, printed with every plan that uses it
    std::string fitted_chip;         // the chip whose runs it was fitted on (another, for a part of the same silicon)
};

struct ChipSpec {
    std::string id;
    std::string name;
    std::vector<std::string> aliases;
    std::string vendor;
    ChipKind kind = ChipKind::gpu;
    double peak_bf16_flops_per_s = 0;
    double peak_fp16_flops_per_s = 0;
    double peak_fp8_flops_per_s = 0;   // 0: no fp8 tensor math
    double peak_int8_ops_per_s = 0;    // 0: not published (int8 plans rejected)
    double peak_fp4_flops_per_s = 0;   // dense; 0: no fp4 tensor math (fp4 plans rejected)
    double hbm_bytes = 0;
    double hbm_bytes_per_s = 0;
    double power_w = 0;                // 0: not published
    // Interconnect: TPU ICI links (one direction per link) or NVLink per GPU (one direction).
    int ici_links = 0;
    double ici_link_bytes_per_s = 0;
    double ici_hop_latency_s = 0;
    double nvlink_bytes_per_s = 0;
    double nvlink_latency_s = 0;
    ChipEfficiency eff;
    std::optional<TpuSliceRules> tpu;
    std::vector<EfficiencyProfile> profiles;  // from hardware/profiles/, matched by chip id
    // Another catalog chip with the same die (a lower-power or other-memory part): its fitted fractions of peak
    // apply here too, against this chip's own peaks (empty: none).
    std::string silicon_of;
    // Devices the chip presents to the framework, each running its own kernels on its share of the work (TPU7x:
    // two TensorCores, two JAX devices; v4/v5p fuse theirs into one megacore device). Per-device kernel shapes
    // follow (the grouped GEMM's rows per device, op_cost.cpp); rates stay per chip.
    int devices_per_chip = 1;
    std::string file;  // where it was loaded from, for messages

    bool has_fp8() const { return peak_fp8_flops_per_s > 0; }
    bool has_int8() const { return peak_int8_ops_per_s > 0; }
    bool has_fp4() const { return peak_fp4_flops_per_s > 0; }
};

ChipSpec chip_from_json(const JsonObject& o);
EfficiencyProfile profile_from_json(const JsonObject& o, std::string* chip_id);

// Every numeric figure in a catalog file must have an entry in its "sources" object (dotted key).
void require_sources(const JsonObject& o);

}  // namespace podsim
