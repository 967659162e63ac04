#include "models/step_parts.hpp"

#include <algorithm>
#include <cstdio>

namespace podsim {

Layout layout_for(const SystemSpec& sys, const ParallelPlan& p) {
    if (sys.is_gpu) return {{p.tp, p.cp, p.dp, p.pp}, 0, 1, 2, 3};
    return {{p.tp, p.cp, p.pp, p.dp}, 0, 1, 3, 2};
}

ExpertLayout expert_layout_for(const SystemSpec& sys, const ParallelPlan& p) {
    if (sys.is_gpu) return {{p.expert_tp(), p.ep, p.edp(), p.pp}, 0, 1, 2};
    return {{p.expert_tp(), p.ep, p.pp, p.edp()}, 0, 1, 3};
}

ChipSpec resolve_efficiency(const SystemSpec& sys, const ParallelPlan& p, bool use_profiles, double override_fraction,
                            std::string& source) {
    ChipSpec chip = sys.chip;
    const std::string cls = efficiency_class(p.precision);
    double& frac = cls == "fp8" ? chip.eff.fp8_matmul_peak_fraction : chip.eff.matmul_peak_fraction;
    source = "stated defaults of " + chip.file;
    if (override_fraction > 0) {
        frac = override_fraction;
        source = "GEMM efficiency override (fitting)";
    } else if (use_profiles) {
        for (const auto& prof : chip.profiles)
            if (prof.precision == cls) {
                frac = prof.matmul_peak_fraction;
                source = "GEMM efficiency " + std::to_string(frac).substr(0, 5) + " from " + prof.file + " (" +
                         prof.method + "); other efficiencies: stated defaults of " + chip.file;
            }
    }
    return chip;
}

StepSize step_size_estimate(const ParallelPlan& p, long long micro_batches, bool record_timeline) {
    // Per (stage, chunk, micro-batch): a forward and a backward task, and at most one send each way.
    // Per (stage, chunk): up to 16 gradient-bucket pieces, each with its sync task. Per stage: the tail.
    const double chunks = double(p.pp) * p.vpp;
    StepSize z;
    z.tasks = 4 * chunks * double(micro_batches) + 32 * chunks + 4 * double(p.pp);
    // Task 12 B, ~1.5 edges 12 B, engine arrays (pending, CSR offset and successors, stream links, start and
    // finish times, event heap) ~56 B, the builder's indices and schedule order ~24 B: 104 B, rounded up.
    z.bytes = z.tasks * (128 + (record_timeline ? 160 : 0));
    return z;
}

void check_split(const ModelSpec& m, const SystemSpec& sys, const ParallelPlan& p, const ChipSpec& chip,
                 const FailFn& fail, const SimBudget& budget) {
    using std::to_string;
    if (p.chips() != sys.chips)
        fail("dp x tp x pp x cp = " + to_string(p.chips()) + " but the system has " + to_string(sys.chips) +
                 " chips (" + sys.label + ")",
             "$.parallel");
    if (m.heads % p.tp != 0)
        fail("TP=" + to_string(p.tp) + " does not divide the " + to_string(m.heads) + " attention heads",
             "$.parallel.tp");
    if (m.kv_heads % p.tp != 0 && p.tp % m.kv_heads != 0)
        fail("TP=" + to_string(p.tp) + " neither divides nor is a multiple of the " + to_string(m.kv_heads) +
                 " KV heads",
             "$.parallel.tp");
    if (m.ffn_hidden % p.tp != 0)
        fail("TP=" + to_string(p.tp) + " does not divide ffn_hidden=" + to_string(m.ffn_hidden), "$.parallel.tp");
    if (m.layers < p.pp * p.vpp)
        fail("pp x vpp = " + to_string(p.pp * p.vpp) + " model chunks but only " + to_string(m.layers) + " layers",
             "$.parallel.pp");
    if (m.seq_len % p.cp != 0) fail("CP=" + to_string(p.cp) + " does not divide seq_len", "$.parallel.cp");
    if (p.global_batch % (p.micro_batch * p.dp) != 0)
        fail("global batch " + to_string(p.global_batch) + " is not a multiple of micro_batch x dp = " +
                 to_string(p.micro_batch * p.dp),
             "$.batch.global_batch_seqs");
    const long long mbs = p.global_batch / std::max<long long>(1, p.micro_batch * p.dp);
    if (p.schedule == Schedule::interleaved && mbs % p.pp != 0)
        // Megatron-LM's rule (megatron/core/pipeline_parallel/schedules.py, forward_backward_pipelining_with_
        // interleaving): "number of microbatches must be divisible by pipeline-parallel size when using
        // interleaved schedule"; its warm-up order assumes whole rounds of pp micro-batches per chunk.
        fail("interleaved 1F1B needs the micro-batch count (" + to_string(mbs) + ") to be a multiple of pp (" +
                 to_string(p.pp) + "), as Megatron-LM requires",
             "$.parallel.vpp");
    if (p.pp_p2p == PipelineP2p::full_blocking && p.vpp > 1)
        // The blocking hand-off is DeepSpeed's PipelineEngine, whose only training schedule is the non-interleaved
        // TrainSchedule (deepspeed/runtime/pipe/schedule.py).
        fail("vpp=" + to_string(p.vpp) + ": the framework's blocking pipeline engine (DeepSpeed) has no interleaved "
                 "schedule",
             "$.parallel.vpp");
    if (p.offload_layers > 0) {
        // Megatron-Core's whole-layer CPU offloading (TransformerConfig.__post_init__): fewer layers than the model
        // has, no pipeline parallelism, no recomputation; and a host path to offload to.
        if (p.offload_layers >= m.layers)
            fail("offload_layers=" + to_string(p.offload_layers) + ": fewer than the model's " + to_string(m.layers) +
                     " layers can be offloaded (Megatron-Core's rule)",
                 "$.training.offload_layers");
        if (p.pp > 1)
            fail("activation offload with pp=" + to_string(p.pp) + ": Megatron-Core has no CPU offloading with "
                     "pipeline parallelism",
                 "$.training.offload_layers");
        if (p.recompute != Recompute::none)
            fail(std::string("activation offload with recompute=") + to_string(p.recompute) +
                     ": Megatron-Core's CPU offloading does not work with activation recomputation",
                 "$.training.offload_layers");
        if (!sys.is_gpu || sys.node.host_link_bytes_per_s <= 0)
            fail("activation offload: the catalog gives this system no host memory and CPU link "
                 "(host_memory_bytes, host_link_bytes_per_s)",
                 "$.training.offload_layers");
    }
    if (p.global_batch % (p.micro_batch * p.dp) == 0) {
        const StepSize z = step_size_estimate(p, mbs);
        char buf[320];
        // Task ids are 32-bit in the engine: no budget reaches past 2^31.
        const long long max_tasks = std::min<long long>(budget.max_tasks, 1LL << 31);
        if (z.tasks > double(max_tasks)) {
            std::snprintf(buf, sizeof buf,
                          "too large to simulate: one step is %.3g tasks (%lld micro-batches x %d stages x %d chunks), "
                          "over the simulation budget of %lld tasks (max_tasks)",
                          z.tasks, mbs, p.pp, p.vpp, max_tasks);
            fail(buf, "$.batch.global_batch_seqs");
        } else if (z.bytes > budget.max_memory_bytes) {
            std::snprintf(buf, sizeof buf,
                          "too large to simulate: one step's task graph needs about %.2f GiB, over the simulation "
                          "budget of %.2f GiB (max_memory)",
                          z.bytes / double(1LL << 30), budget.max_memory_bytes / double(1LL << 30));
            fail(buf, "$.batch.global_batch_seqs");
        }
    }
    if (p.precision == Precision::fp8 && !chip.has_fp8()) fail(chip.name + " has no fp8 tensor math", "$.training.precision");
    if (p.precision == Precision::int8 && !chip.has_int8())
        fail(chip.name + " has no int8 tensor math (the catalog gives no peak_int8_ops_per_s)", "$.training.precision");
    if (p.precision == Precision::fp4 && !chip.has_fp4())
        fail(chip.name + " has no fp4 tensor math (the catalog gives no peak_fp4_flops_per_s)", "$.training.precision");
    // Megatron-LM has no ZeRO-2/3 with pipelining; PyTorch FSDP2 pipelines FSDP-sharded stages (ZeRO-3), so podsim
    // accepts that combination (the planner's search keeps to Megatron's).
    if (p.pp > 1 && p.zero == 2) fail("ZeRO-2 with pipeline parallelism is not supported (gradients are needed whole "
                                      "for every micro-batch)", "$.parallel.zero");
    if (!m.moe.enabled() && (p.ep > 1 || p.etp > 1))
        fail("ep/etp > 1 but the model has no experts", "$.parallel.ep");
    if (m.moe.enabled()) {
        if (m.moe.experts % p.ep != 0)
            fail("EP=" + to_string(p.ep) + " does not divide the " + to_string(m.moe.experts) + " experts", "$.parallel.ep");
        // In 64 bits: etp and ep are each up to limits::max_chips, their product is not an int (fuzz finding).
        const long long ranks = static_cast<long long>(p.tp) * p.cp * p.dp;
        const long long spread = static_cast<long long>(p.expert_tp()) * p.ep;
        if (ranks % spread != 0)
            fail("etp x ep = " + to_string(spread) + " does not divide tp x cp x dp = " + to_string(ranks) +
                     " (the ranks experts are spread over)",
                 "$.parallel.ep");
        if (m.moe.expert_ffn_hidden % p.expert_tp() != 0)
            fail("expert TP=" + to_string(p.expert_tp()) + " does not divide expert_ffn_hidden", "$.parallel.etp");
    }
}

double in_flight_microbatches(const ParallelPlan& p, int s, long long micro_batches) {
    const double mbs = double(micro_batches);
    const int P = p.pp;
    if (p.schedule == Schedule::gpipe) return mbs;
    if (p.schedule == Schedule::one_f_one_b) return std::min<double>(P - s, mbs);
    return std::min<double>(P - s + double(P - 1) / p.vpp, mbs);
}

double optimizer_time_s(double shard, const ParallelPlan& p, const ChipSpec& chip, const calib::KernelProfile* k) {
    if (k && k->adamw_s_per_param > 0) return shard * k->adamw_s_per_param;
    const double bytes = shard * (p.master_weight_bytes * 2 + 8 * 2 + p.grad_reduce_bytes + 2);
    return bytes / (chip.hbm_bytes_per_s * chip.eff.memory_bw_fraction) + 10 * chip.eff.kernel_overhead_s;
}

double fsdp_layer_params_per_device(const ModelSpec& m, const ParallelPlan& p) {
    const double routed = m.routed_expert_params_in(0, m.layers) / m.layers;
    return (m.params_per_layer() - routed) / p.tp + routed / (double(p.ep) * p.expert_tp());
}

double model_flops_per_token(const ModelSpec& m, bool causal_halved) {
    const double n_matmul = m.active_params() - (m.tied_embeddings ? 0 : m.embedding_params());
    const double attention = 6.0 * m.layers * m.heads * double(m.qk_head_dim() + m.v_dim()) * double(m.seq_len);
    return 6 * n_matmul + (causal_halved ? 0.5 : 1.0) * attention;
}

}  // namespace podsim
