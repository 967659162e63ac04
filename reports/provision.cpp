#include "reports/provision.hpp"

#include <cctype>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "models/step_parts.hpp"
#include "placement/placement.hpp"

namespace podsim {

std::string FrameworkSettings::line() const {
    std::string o;
    for (const auto& [k, v] : settings) {
        if (!o.empty()) o += ' ';
        if (framework == "MaxText") o += k + "=" + v;
        else o += v.empty() ? k : k + " " + v;
    }
    return o;
}

const std::string* FrameworkSettings::find(const std::string& key) const {
    for (const auto& [k, v] : settings)
        if (k == key) return &v;
    return nullptr;
}

namespace {

// A resource name gcloud accepts: lowercase letters, digits and dashes, starting with a letter.
std::string resource_name(const std::string& s) {
    std::string o = "podsim-";
    for (char c : s) {
        if (std::isalnum(static_cast<unsigned char>(c))) o += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        else if (!o.empty() && o.back() != '-') o += '-';
        if (o.size() >= 40) break;
    }
    while (!o.empty() && o.back() == '-') o.pop_back();
    return o;
}

std::string str(long long v) { return std::to_string(v); }

// Megatron-LM's --pipeline-model-parallel-layout (megatron/core/transformer/pipeline_parallel_layer_layout.py):
// virtual stages in model order split by "|", "E" the embedding, "t" a decoder layer, "L" the loss; "x*n" and
// "(...)*n" repeat. podsim gives remainder layers to the earliest model chunks (chunk_layers), as written here.
std::string pipeline_layout(int layers, int chunks) {
    std::vector<std::string> stage(chunks);
    for (int c = 0; c < chunks; ++c) {
        const int n = chunk_layers(layers, chunks, c);
        std::string& st = stage[c];
        if (c == 0) st += 'E';
        if (n >= 1) st += 't';
        if (n > 1) st += '*', st += std::to_string(n);
        if (c == chunks - 1) st += 'L';
    }
    std::string o;
    for (int c = 0; c < chunks;) {
        int run = 1;
        while (c > 0 && c + run < chunks - 1 && stage[c + run] == stage[c]) ++run;  // first and last stay single
        if (run > 1) o += "(" + stage[c] + "|)*" + std::to_string(run);
        else o += stage[c] + (c + 1 < chunks ? "|" : "");
        c += run;
    }
    return o;
}

}  // namespace

// --- Megatron-LM ----------------------------------------------------------------------------------------------------
// Rules from megatron/training/arguments.py and megatron/core/pipeline_parallel/schedules.py (NVIDIA/Megatron-LM at
// d98e8a6, 2026-08-22): layers divisible by the pipeline size unless a layout is given; interleaving needs pp > 2
// or --overlap-p2p-communication and at least pp micro-batches; --tp-comm-overlap needs --sequence-parallel (and
// Transformer Engine's userbuffers need the TP group inside one NVLink domain); --overlap-param-gather needs the
// distributed optimizer (or Megatron-FSDP) and --overlap-grad-reduce; Megatron-FSDP needs --ckpt-format
// fsdp_dtensor; --use-torch-fsdp2 is refused with pipeline or expert parallelism, so ZeRO-2/3 go to Megatron-FSDP.
FrameworkSettings megatron_settings(const SystemSpec& sys, const ModelSpec& m, const ParallelPlan& p) {
    FrameworkSettings f;
    f.framework = "Megatron-LM";
    auto add = [&](std::string k, std::string v = "") { f.settings.emplace_back(std::move(k), std::move(v)); };
    add("--tensor-model-parallel-size", str(p.tp));
    add("--pipeline-model-parallel-size", str(p.pp));
    if (p.cp > 1) {
        add("--context-parallel-size", str(p.cp));
        // How K/V are shared, as podsim priced it: Transformer Engine's ring (p2p, Megatron's default) or its gather.
        add("--cp-comm-type", p.cp_algorithm == ParallelPlan::CpAlgorithm::ring ? "p2p" : "allgather");
    }
    if (p.ep > 1) {
        add("--expert-model-parallel-size", str(p.ep));
        add("--expert-tensor-parallel-size", str(p.expert_tp()));
    }
    if (p.pp > 1) {
        const int chunks = p.pp * p.vpp;
        if (m.layers % chunks != 0) {
            add("--pipeline-model-parallel-layout", "\"" + pipeline_layout(m.layers, chunks) + "\"");
            f.notes.push_back(fmt::format("{} layers on {} model chunks: the layout gives the first {} chunks one layer "
                                          "more, as podsim priced it",
                                          m.layers, chunks, m.layers % chunks));
        } else if (p.vpp > 1) {
            add("--num-layers-per-virtual-pipeline-stage", str(m.layers / chunks));
        }
        if (p.vpp > 1 && p.pp <= 2) add("--overlap-p2p-communication");
        const long long mbs = p.global_batch / (static_cast<long long>(p.dp) * p.micro_batch);
        if (p.vpp > 1 && mbs < p.pp)
            f.blockers.push_back(fmt::format("interleaving needs at least pp = {} micro-batches per replica, the plan has "
                                             "{} (schedules.py: microbatch_group_size_per_vp_stage)", p.pp, mbs));
    }
    const bool sp = p.sp && p.tp > 1;
    if (sp) add("--sequence-parallel");
    if (p.zero == 1) add("--use-distributed-optimizer");
    if (p.zero >= 2) {
        add("--use-megatron-fsdp");
        add("--data-parallel-sharding-strategy", p.zero == 2 ? "optim_grads" : "optim_grads_params");
        add("--ckpt-format", "fsdp_dtensor");
    }
    add("--micro-batch-size", str(p.micro_batch));
    add("--global-batch-size", str(p.global_batch));
    add("--seq-length", str(m.seq_len));
    if (p.global_batch % (static_cast<long long>(p.dp) * p.micro_batch) != 0)
        f.blockers.push_back(fmt::format("global batch {} is not a multiple of micro-batch {} x data-parallel {}",
                                         p.global_batch, p.micro_batch, p.dp));
    // Megatron-LM arguments.py: --cpu-offloading with --cpu-offloading-num-layers (TransformerConfig's rules: pp 1,
    // no recomputation, fewer than all layers; check_split holds podsim's plans to them).
    if (p.offload_layers > 0) {
        add("--cpu-offloading");
        add("--cpu-offloading-num-layers", str(p.offload_layers));
    }
    switch (p.recompute) {
        case Recompute::none: break;
        case Recompute::selective:
            add("--recompute-granularity", "selective");
            if (p.selective == SelectiveRecompute::alternate_matmuls)
                f.notes.push_back("the plan was priced with TorchTitan's per-op selective recomputation; Megatron-LM's "
                                  "selective recomputes only the attention core and keeps more activations");
            break;
        case Recompute::minimal:
            add("--recompute-granularity", "selective");
            f.notes.push_back("podsim's minimal recomputation (every non-GEMM op) has no exact Megatron-LM flag; "
                              "selective (the attention core) is the nearest");
            break;
        case Recompute::full:
            add("--recompute-granularity", "full");
            add("--recompute-method", "uniform");
            add("--recompute-num-layers", "1");
            break;
        case Recompute::names:
            add("--recompute-granularity", "selective");
            f.notes.push_back("the plan was priced with a named-tensor recomputation policy (keeps " + to_string(p.remat) +
                              "); Megatron-LM's selective recomputes only the attention core and keeps more "
                              "activations");
            break;
    }
    // Low precision (arguments.py / TransformerConfig): --fp8-recipe defaults to delayed; NVFP4 is --fp4-format
    // e2m1 --fp4-recipe nvfp4. Megatron has no int8 training: an int8 plan is an AQT (MaxText) plan, run in bf16.
    if (p.precision == Precision::fp8) {
        add("--bf16");
        add("--fp8-format", "hybrid");
        if (p.fp8_recipe != Fp8Recipe::delayed) add("--fp8-recipe", to_string(p.fp8_recipe));
    } else if (p.precision == Precision::fp4) {
        add("--bf16");
        add("--fp4-format", "e2m1");
        add("--fp4-recipe", "nvfp4");
    } else {
        add(p.precision == Precision::fp16 ? "--fp16" : "--bf16");
        if (p.precision == Precision::int8)
            f.notes.push_back("Megatron-LM has no int8 training; these settings run the GEMMs in bf16");
    }
    if (p.attention != AttentionKernel::standard) add("--use-flash-attn");
    if (p.attention == AttentionKernel::flash2)
        f.notes.push_back("the plan was priced with FlashAttention-2 (PyTorch SDPA's kernel); Megatron-LM with Transformer "
                          "Engine runs the chip's own fused attention, faster on Hopper");
    if (p.tp_comm_overlap != TpOverlap::none) {
        const Layout lay = layout_for(sys, p);
        if (!sp)
            f.notes.push_back("TP communication overlap is not emitted: Megatron-LM allows --tp-comm-overlap only with "
                              "--sequence-parallel (TP > 1)");
        else if (!inside_one_nvlink_domain(sys, lay.sizes, lay.tp))
            f.notes.push_back("TP communication overlap is not emitted: Transformer Engine's userbuffers work only "
                              "inside one NVLink domain and this TP group spans several");
        else
            add("--tp-comm-overlap");
    }
    if (p.dp_overlap) add("--overlap-grad-reduce");
    if (p.param_gather_overlap && p.zero >= 1) {
        if (p.dp_overlap) add("--overlap-param-gather");
        else f.notes.push_back("--overlap-param-gather is not emitted: Megatron-LM needs --overlap-grad-reduce with it");
    }
    return f;
}

// --- MaxText --------------------------------------------------------------------------------------------------------
// The grouped matmul's passes as MaxText names its M-tiles (wi_tile_<pass>_batch_seq), in OpPass order.
constexpr const char* kTilePass[3] = {"fwd", "dlhs", "drhs"};

// Rules from src/maxtext/configs/types.py and base.yml (AI-Hypercomputer/maxtext at e591f30, 2026-08-22): the ici_*
// axes multiply to the devices of one slice and the dcn_* axes to the slices (max_utils.fill_unspecified_mesh_axes;
// every axis is written out, none left at -1); pipeline stages x num_pipeline_repeats x num_layers_per_pipeline_stage
// = decoder layers; num_pipeline_microbatches a multiple of the stages and a divisor of the per-step batch
// (per_device_batch_size x devices); global batch = per_device_batch_size x devices x gradient_accumulation_steps;
// fp8 quantization not with gradient accumulation.
FrameworkSettings maxtext_settings(const SystemSpec& sys, const ModelSpec& m, const ParallelPlan& p) {
    FrameworkSettings f;
    f.framework = "MaxText";
    auto add = [&](std::string k, std::string v) { f.settings.emplace_back(std::move(k), std::move(v)); };
    const Layout lay = layout_for(sys, p);
    // Each group's members inside a slice (ICI) and across slices (DCN), as podsim placed them.
    auto split = [&](size_t which) -> std::pair<int, int> {
        int dcn = 1;
        for (const GroupDim& d : group_shape(sys, lay.sizes, which).dims)
            if (d.dcn) dcn *= d.length;
        return {lay.sizes[which] / dcn, dcn};
    };
    const auto [tp_i, tp_d] = split(lay.tp);
    const auto [cp_i, cp_d] = split(lay.cp);
    const auto [pp_i, pp_d] = split(lay.pp);
    auto [dp_i, dp_d] = split(lay.dp);
    // Experts: podsim carves the EP ranks out of the innermost data-parallel ranks (models/step_parts.hpp); MaxText's
    // expert axis also shards the batch of the dense layers, so it takes that share of the data axis.
    int ep_i = 1;
    if (p.ep > 1) {
        if (p.expert_tp() != p.tp)
            f.blockers.push_back(fmt::format("expert tensor parallelism {} differs from tp {}: the plan spreads experts "
                                             "over TP ranks, and MaxText's expert axis is a mesh axis beside the "
                                             "tensor axis, not carved out of it", p.expert_tp(), p.tp));
        else if (p.cp > 1 || dp_i % p.ep != 0)
            f.blockers.push_back(fmt::format("expert parallelism {} does not divide the {} data-parallel ranks of one "
                                             "slice{}: MaxText's expert axis cannot express it",
                                             p.ep, dp_i, p.cp > 1 ? " (with context parallelism)" : ""));
        else
            ep_i = p.ep, dp_i /= p.ep;
    }
    const bool fsdp = p.zero >= 3;
    add("dcn_data_parallelism", str(dp_d));
    add("dcn_fsdp_parallelism", "1");
    add("dcn_pipeline_parallelism", str(pp_d));
    add("dcn_tensor_parallelism", str(tp_d));
    add("dcn_context_parallelism", str(cp_d));
    // A chip of two JAX devices (TPU7x's TensorCores, v3's cores) halves its batch between them: MaxText's ICI
    // axes multiply to the slice's devices, so the data-parallel axis takes the factor (the recipes' FSDP over all
    // TensorCores).
    const int dev = sys.chip.devices_per_chip;
    add("ici_data_parallelism", str(fsdp ? 1 : dp_i * dev));
    add("ici_fsdp_parallelism", str(fsdp ? dp_i * dev : 1));
    add("ici_tensor_parallelism", str(tp_i));
    add("ici_context_parallelism", str(cp_i));
    add("ici_pipeline_parallelism", str(pp_i));
    add("ici_expert_parallelism", str(ep_i));
    if (cp_i * cp_d > 1) {
        // How K/V are shared, as podsim priced it (base.yml context_parallel_strategy, default all_gather); TPU ring
        // attention runs only on the Tokamax splash kernel (attention_op.py: "TPU Tokamax ring attention requires
        // use_tokamax_splash=True").
        const bool ring = p.cp_algorithm == ParallelPlan::CpAlgorithm::ring;
        add("context_parallel_strategy", ring ? "ring" : "all_gather");
        if (ring) add("use_tokamax_splash", "true");
    }
    if (m.moe.enabled() && m.moe.capacity_factor <= 0 && !(p.gmm_row_tiles == GroupedGemmTiles::all(512))) {
        // The grouped matmul's M-tiles podsim priced, where they are not base.yml's 512 rows (wi_tile_* / wo_tile_*
        // _batch_seq: megablox and Tokamax gmm; on TPU a tile is whole 128-row blocks, tokamax pallas_mosaic_tpu.py).
        const GroupedGemmTiles& t = p.gmm_row_tiles;
        bool expressible = true, whole_blocks = true;
        for (int i = 0; i < 3; ++i) {
            expressible = expressible && t.up[i] > 0 && t.down[i] > 0;
            whole_blocks = whole_blocks && t.up[i] % 128 == 0 && t.down[i] % 128 == 0;
        }
        if (!expressible) {
            f.notes.push_back("podsim priced the experts as one GEMM per expert (no shared tiles); MaxText's megablox "
                              "shares 512-row tiles between experts (wi_tile_* / wo_tile_*_batch_seq)");
        } else {
            if (!whole_blocks)
                f.blockers.push_back("a grouped-matmul row tile that is not a multiple of 128 rows: TPU Pallas tiles "
                                     "are whole 128-row blocks (openxla/tokamax ragged_dot pallas_mosaic_tpu.py)");
            for (int i = 0; i < 3; ++i) add(fmt::format("wi_tile_{}_batch_seq", kTilePass[i]), str(t.up[i]));
            for (int i = 0; i < 3; ++i) add(fmt::format("wo_tile_{}_batch_seq", kTilePass[i]), str(t.down[i]));
        }
    }
    if (dp_d > 1 && fsdp)
        f.notes.push_back("FSDP inside each slice, data parallelism across slices (HSDP), as podsim prices ZeRO-3 on "
                          "multislice");
    if (p.zero == 1 || p.zero == 2) {
        add("shard_optimizer_over_data", "true");
        if (p.zero == 2) f.notes.push_back("MaxText shards the optimizer state over the data axis (ZeRO-1), not the "
                                           "gradients: ZeRO-2's gradient sharding has no MaxText switch");
    }
    const long long mbs = p.global_batch / (static_cast<long long>(p.dp) * p.micro_batch);  // per replica
    long long accum = 1;
    if (p.pp > 1) {
        const int stages = p.pp, chunks = p.pp * p.vpp;
        if (m.layers % chunks != 0)
            f.blockers.push_back(fmt::format("MaxText needs stages x repeats x layers per stage = layers: {} layers do "
                                             "not split evenly over {} x {} model chunks", m.layers, p.pp, p.vpp));
        add("num_layers_per_pipeline_stage", str(std::max(1, m.layers / chunks)));
        add("num_pipeline_repeats", str(p.vpp));
        add("num_pipeline_microbatches", str(mbs));
        if (mbs % stages != 0)
            f.blockers.push_back(fmt::format("MaxText needs num_pipeline_microbatches ({}) to be a multiple of the {} "
                                             "pipeline stages", mbs, stages));
        f.notes.push_back(std::string("MaxText runs its own pipeline schedule (circular over num_pipeline_repeats); "
                                      "podsim priced ") + to_string(p.schedule));
    } else {
        accum = mbs;
    }
    // per_device_batch_size counts sequences per device per accumulation step, over all devices (TP ranks too).
    // A chip of two JAX devices (TPU7x's TensorCores) counts twice.
    const long long per_step = p.global_batch / accum;
    const long long devices = static_cast<long long>(sys.chips) * sys.chip.devices_per_chip;
    const double pdbs = double(per_step) / devices;
    const std::string pdbs_s = fmt::format("{:.12g}", pdbs);
    add("per_device_batch_size", pdbs_s);
    if (std::floor(std::stod(pdbs_s) * devices + 1e-9) != double(per_step))
        f.blockers.push_back(fmt::format("{} sequences per step over {} devices is not a per_device_batch_size MaxText "
                                         "can multiply back exactly", per_step, devices));
    if (f.find("wi_tile_fwd_batch_seq") && p.ep == 1) {
        // moe.py pads each device's token-expert rows to wi_tile_fwd_batch_seq; every other M-tile must divide the
        // padded count (megablox backend.py _calculate_num_tiles raises otherwise). Without expert parallelism a
        // device's rows are its data shard's tokens (a TP group shares them) x top-k; with it they follow the
        // routing (the ragged all-to-all's buffer), and MaxText's own check is left to decide.
        const long long rows = std::llround(pdbs * p.tp * m.seq_len) * m.moe.top_k;
        const GroupedGemmTiles& t = p.gmm_row_tiles;
        const long long pad = t.up[0], padded = (rows + pad - 1) / pad * pad;
        for (int i = 0; i < 3; ++i)
            for (const auto& [matrix, tile] : {std::pair{"wi", t.up[i]}, std::pair{"wo", t.down[i]}})
                if (padded % tile != 0)
                    f.blockers.push_back(fmt::format("{}_tile_{}_batch_seq={} does not divide the {} token-expert rows "
                                                     "per device (padded to wi_tile_fwd_batch_seq {}): MaxText's "
                                                     "grouped matmul needs it to",
                                                     matrix, kTilePass[i], tile, padded, pad));
    }
    add("gradient_accumulation_steps", str(accum));
    if (p.recompute == Recompute::full) add("remat_policy", "full");
    else if (p.recompute == Recompute::minimal) add("remat_policy", "minimal");
    else if (p.recompute == Recompute::names) {
        // remat_policy=custom with each checkpoint name's place (MaxText base.yml); the gated MLP's up halves are
        // mlpwi_0 and mlpwi_1, an ungated one's matrix mlpwi.
        add("remat_policy", "custom");
        auto place = [&](RematTensor t) {
            return p.remat.offloaded(t) ? "offload" : p.remat.kept(t) ? "device" : "remat";
        };
        add("decoder_layer_input", place(RematTensor::layer_input));
        add("query_proj", place(RematTensor::query));
        add("key_proj", place(RematTensor::key));
        add("value_proj", place(RematTensor::value));
        add("context", place(RematTensor::context));
        add("out_proj", place(RematTensor::out_proj));
        if (m.gated()) {
            add("mlpwi_0", place(RematTensor::mlp_wi_0));
            add("mlpwi_1", place(RematTensor::mlp_wi_1));
        } else {
            add("mlpwi", place(RematTensor::mlp_wi_0));
        }
        add("mlpwo", place(RematTensor::mlp_wo));
        if (m.moe.enabled()) {
            add("moe_mlpwi_0", place(RematTensor::moe_wi_0));
            add("moe_mlpwi_1", place(RematTensor::moe_wi_1));
            add("moe_mlpwo", place(RematTensor::moe_wo));
        }
    } else if (p.recompute == Recompute::selective && p.attention == AttentionKernel::standard) {
        // Korthikanti's selective: the attention core runs again, every GEMM output is kept: MaxText's minimal.
        add("remat_policy", "minimal");
    } else if (p.per_op_selective()) {
        add("remat_policy", "minimal");
        f.notes.push_back("the plan was priced with TorchTitan's per-op selective recomputation; MaxText's minimal "
                          "keeps every GEMM output");
    } else {
        // No recomputation, or selective under a fused attention kernel (nothing of the core to recompute): MaxText
        // keeps every GEMM output and the attention output with minimal_with_context and reruns only the
        // elementwise ops between them; it has no policy that keeps those too.
        add("remat_policy", "minimal_with_context");
        f.notes.push_back("MaxText's least recomputation is remat_policy=minimal_with_context (the elementwise ops "
                          "between the kept GEMM and attention outputs run again); podsim priced no recomputation");
    }
    if (p.offload_layers > 0)
        f.blockers.push_back(fmt::format("the plan offloads {} layers' activations to host memory (Megatron-Core's "
                                         "cpu_offloading); MaxText offloads per tensor through remat policies, not "
                                         "whole layers", p.offload_layers));
    if (p.precision == Precision::fp8) {
        add("quantization", "fp8");
        if (accum > 1)
            f.blockers.push_back("MaxText refuses fp8 quantization with gradient accumulation (types.py); the plan has "
                                 + str(accum) + " accumulation steps");
    }
    if (p.precision == Precision::int8) add("quantization", "int8");  // AQT (MaxText/layers/quantizations.py)
    return f;
}

std::string cloud_accelerator_type(const SystemSpec& sys) {
    if (sys.is_gpu || !sys.chip.tpu) return "";
    const auto& r = *sys.chip.tpu;
    const int per_slice = sys.chips / std::max(1, sys.slices);
    return r.type_prefix + "-" + std::to_string(r.type_counts_cores ? per_slice * r.cores_per_chip : per_slice);
}

namespace {

// Text safe inside a double-quoted shell word and a ${VAR:?message}: letters, digits, dashes, dots, spaces.
std::string shell_safe(const std::string& s) {
    std::string o;
    for (char c : s)
        if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == ' ') o += c;
    return o;
}

}  // namespace

Provisioning provisioning_for(const std::string& name, const SystemSpec& sys, const ModelSpec& m,
                              const ParallelPlan& p, PriceOption price, const std::string& region) {
    Provisioning out;
    const std::string id = resource_name(name);
    const std::string where = region.empty() ? "a zone" : "a zone of " + shell_safe(region);
    const std::string project = ": \"${PROJECT:?set PROJECT to your Google Cloud project id}\"";
    if (sys.is_gpu && sys.node.provider == "onprem") {
        out.notes.push_back(sys.node.id + " is an on-premise system: no cloud provisioning; use your scheduler (e.g. "
                            "Slurm: " + std::to_string(sys.nodes) + " nodes x " + std::to_string(sys.node.gpus_per_node) + " GPUs)");
        out.settings = megatron_settings(sys, m, p);
    } else if (!sys.is_gpu) {
        const auto& r = *sys.chip.tpu;
        const std::string type = cloud_accelerator_type(sys);
        out.commands.push_back(project);
        out.commands.push_back(": \"${ZONE:?set ZONE to " + where + " that offers " + type + "}\"");
        std::string runtime = r.runtime_version;
        if (runtime.empty()) {
            out.commands.push_back(": \"${RUNTIME_VERSION:?set RUNTIME_VERSION to a TPU software version for " + type +
                                   " (cloud.google.com/tpu/docs/runtimes)}\"");
            runtime = "\"$RUNTIME_VERSION\"";
        }
        std::string c = fmt::format("gcloud compute tpus queued-resources create {}-qr --project=\"$PROJECT\" "
                                    "--zone=\"$ZONE\" --accelerator-type={} --runtime-version={}",
                                    id, type, runtime);
        if (sys.slices > 1) c += fmt::format(" --node-count={} --node-prefix={}", sys.slices, id);
        else c += " --node-id=" + id;
        if (price == PriceOption::spot) c += " --spot";
        out.commands.push_back(c);
        out.commands.push_back(fmt::format("gcloud compute tpus queued-resources describe {}-qr --project=\"$PROJECT\" "
                                           "--zone=\"$ZONE\"   # wait for state ACTIVE",
                                           id));
        if (sys.slices > 1)
            out.notes.push_back(fmt::format("{} slices over DCN (multislice): MaxText's dcn_* axes span the slices", sys.slices));
        out.settings = maxtext_settings(sys, m, p);
    } else {
        out.commands.push_back(project);
        out.commands.push_back(": \"${ZONE:?set ZONE to " + where + " that offers " + shell_safe(sys.node.id) + "}\"");
        out.commands.push_back("REGION=\"${ZONE%-*}\"");
        out.commands.push_back(": \"${IMAGE_FAMILY:?set IMAGE_FAMILY to a GPU image family, e.g. one listed by gcloud "
                               "compute images list --project=deeplearning-platform-release}\"");
        out.commands.push_back("IMAGE_PROJECT=\"${IMAGE_PROJECT:-deeplearning-platform-release}\"");
        out.commands.push_back(fmt::format("gcloud compute resource-policies create group-placement {}-placement "
                                           "--project=\"$PROJECT\" --region=\"$REGION\" --collocation=collocated",
                                           id));
        std::string c = fmt::format("gcloud compute instances bulk create --project=\"$PROJECT\" --zone=\"$ZONE\" "
                                    "--name-pattern=\"{}-####\" --count={} --machine-type={} --maintenance-policy=TERMINATE "
                                    "--resource-policies={}-placement --image-family=\"$IMAGE_FAMILY\" "
                                    "--image-project=\"$IMAGE_PROJECT\"",
                                    id, sys.nodes, shell_safe(sys.node.id), id);
        if (price == PriceOption::spot) c += " --provisioning-model=SPOT --instance-termination-action=DELETE";
        else c += " --provisioning-model=STANDARD";
        out.commands.push_back(c);
        out.notes.push_back("A3/A4 machine types bring their GPUs; GPUDirect (TCPX/TCPXO/RDMA) needs the extra VPC networks "
                            "and NICs of Google's cluster guide, not shown here");
        out.notes.push_back("a compact placement policy holds a limited number of VMs; larger clusters use several, "
                            "or a reservation");
        out.settings = megatron_settings(sys, m, p);
    }
    for (const auto& n : out.settings.notes) out.notes.push_back(n);
    for (const auto& b : out.settings.blockers) out.notes.push_back("not runnable as priced in " + out.settings.framework + ": " + b);
    out.framework = out.settings.framework;
    out.launch_flags = out.settings.line();
    if (price == PriceOption::commit_1y || price == PriceOption::commit_3y)
        out.notes.push_back(std::string("the ") + to_string(price) +
                            " price needs a committed-use purchase for these resources first (gcloud compute commitments "
                            "create ... --plan=" + (price == PriceOption::commit_1y ? "12-month" : "36-month") + ")");
    return out;
}

}  // namespace podsim
