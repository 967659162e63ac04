#include "models/step_costs.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <fmt/format.h>

#include "placement/placement.hpp"
#include "models/layer_ops.hpp"
#include "models/quantize_ops.hpp"
#include "models/straggler.hpp"
#include "models/result_checks.hpp"
#include "sim/collectives.hpp"

namespace podsim {

namespace {
// Host copies (cudaMemcpyAsync from and to pinned memory) reach this fraction of the host link's one-way peak: a
// stated default, as memory_bw_fraction is for HBM streaming kernels.
constexpr double kHostCopyFraction = 0.8;
// The data-parallel gradient sync's collective: a reduce-scatter to the shard owners where optimizer states are
// sharded, unless the stack all-reduces whole gradients anyway (ParallelPlan::grad_sync_reduce_scatter).
Collective grad_sync_collective(const ParallelPlan& p) {
    return p.grad_sync_reduce_scatter() ? Collective::reduce_scatter : Collective::all_reduce;
}
}  // namespace

const char* to_string(Reject r) {
    switch (r) {
        case Reject::none: return "none";
        case Reject::split: return "split";
        case Reject::placement: return "placement";
        case Reject::memory: return "memory";
    }
    return "?";
}

StepPricer::StepPricer(const ModelSpec& m, const SystemSpec& sys, const CollectiveTimer& timer, PricingOptions opt)
    : m_(m), sys_(sys), timer_(timer), opt_(opt) {
    ParallelPlan p;
    p.precision = Precision::bf16;
    bf16_ = resolve_efficiency(sys_, p, opt_.use_profiles, opt_.matmul_fraction_override, bf16_source_);
    p.precision = Precision::fp8;
    fp8_ = resolve_efficiency(sys_, p, opt_.use_profiles, opt_.matmul_fraction_override, fp8_source_);
    flops_per_token_ = model_flops_per_token(m_);
    flops_per_token_causal_ = model_flops_per_token(m_, true);
    dense_layer_params_ = m_.dense_layer_params();
    moe_layer_params_ = m_.moe.enabled() ? m_.moe_layer_params() : 0;
    routed_params_per_moe_layer_ = m_.moe.enabled() ? double(m_.moe.experts) * m_.expert_params() : 0;
    moe_prefix_.assign(m_.layers + 1, 0);
    for (int i = 0; i < m_.layers; ++i) moe_prefix_[i + 1] = moe_prefix_[i] + m_.is_moe_layer(i);
}

double StepPricer::collective_s(Collective c, double bytes, const GroupRef& g, const GroupNetwork& net) const {
    // The analytical timer answers exactly this (CollectiveTimer::cost); asking it directly skips its map lookup.
    if (timer_.backend() == NetworkBackend::analytical) return collective_cost(c, bytes, net).time_s;
    return timer_.cost(c, bytes, g).time_s;
}

StepPricer::LayoutEntry& StepPricer::layout(const ParallelPlan& p) {
    // Degrees are at most limits::max_chips (2^22): 22 bits each, exact.
    const std::pair<uint64_t, uint64_t> key{
        uint64_t(p.tp) | uint64_t(p.cp) << 22 | uint64_t(p.pp) << 44,
        uint64_t(p.dp) | uint64_t(p.ep) << 22 | uint64_t(p.expert_tp()) << 44};
    auto it = layouts_.find(key);
    if (it != layouts_.end()) return it->second;
    LayoutEntry& e = layouts_[key];
    e.compute_scale = slowest_rank_factor(sys_.rank_speed_cv, p.chips());
    const Layout lay = layout_for(sys_, p);
    e.tp = {lay.sizes, lay.tp, GroupRef::Part::all};
    e.cp = {lay.sizes, lay.cp, GroupRef::Part::all};
    // The gradient group. Context-parallel ranks hold the same weights and each computes the gradient of its part
    // of the sequence, so on GPUs (CP next to DP in the layout) gradients are reduced, and ZeRO/FSDP shards, over
    // dp x cp ranks: Megatron-Core's data-parallel group "with context parallel" (distributed optimizer and DDP
    // buffers), TorchTitan's dp_shard_cp mesh. (TPU layouts put PP between CP and DP: there it stays dp.)
    std::vector<int> grad_sizes = lay.sizes;
    size_t grad_which = lay.dp;
    if (sys_.is_gpu && p.cp > 1) grad_sizes = {p.tp, p.cp * p.dp, p.pp}, grad_which = 1;
    e.grad_ranks = grad_sizes[grad_which];
    e.dp = {grad_sizes, grad_which, GroupRef::Part::all};
    // FSDP shards over the dp levels inside a slice; across slices (DCN) the shards are all-reduced (HSDP).
    e.fsdp = {grad_sizes, grad_which, GroupRef::Part::inside_slice};
    e.dcn = {grad_sizes, grad_which, GroupRef::Part::across_slices};
    e.pp = {lay.sizes, lay.pp, GroupRef::Part::all};
    for (size_t gi : {lay.tp, lay.cp, lay.dp}) {
        const GroupNetwork g = place_group(sys_, lay.sizes, gi);
        if (!g.placeable) e.placeable = false, e.why_not.emplace_back(g.why_not, "$.parallel");
    }
    if (!e.placeable) return e;
    e.tp_in_one_domain = inside_one_nvlink_domain(sys_, lay.sizes, lay.tp);
    e.pp_link = neighbour_link(sys_, lay.sizes, lay.pp);
    e.dpnet = timer_.network(e.dp);
    e.fsdpnet = timer_.network(e.fsdp);
    e.dcnnet = timer_.network(e.dcn);
    if (m_.moe.enabled()) {
        // The expert layout's groups: EP for the all-to-alls, etp, edp for the expert gradients.
        const ExpertLayout el = expert_layout_for(sys_, p);
        for (size_t gi : {el.etp, el.ep, el.edp}) {
            const GroupNetwork g = place_group(sys_, el.sizes, gi);
            if (!g.placeable) e.placeable = false, e.why_not.emplace_back("expert groups: " + g.why_not, "$.parallel.ep");
        }
        if (!e.placeable) return e;
        e.ep = {el.sizes, el.ep, GroupRef::Part::all};
        e.etp = {el.sizes, el.etp, GroupRef::Part::all};
        e.edp = {el.sizes, el.edp, GroupRef::Part::all};
        e.edpnet = timer_.network(e.edp);
    }
    return e;
}

// Everything layer_ops and the op costs read from the plan besides the layout (tests/test_one_step.cpp checks a
// cached pricer against a fresh one on varied plans). The micro-batch count: quantized weights cached across a
// step's micro-batches cost their share of each. The grouped GEMM's row tiles (0-65536, 17 bits each) last.
StepPricer::LayerKey StepPricer::layer_key(const ParallelPlan& p) {
    auto tiles = [](const int* t) { return uint64_t(t[0]) | uint64_t(t[1]) << 21 | uint64_t(t[2]) << 42; };
    return {{
        uint64_t(p.micro_batch) | uint64_t(p.sp) << 40 | uint64_t(p.precision) << 41 | uint64_t(p.recompute) << 44 |
            uint64_t(p.selective) << 47 | uint64_t(p.attention) << 48 | uint64_t(p.tp_comm_overlap) << 50 | uint64_t(p.ep_overlap) << 52 |
            uint64_t(p.cp_algorithm) << 53 | uint64_t(p.ep_node_dedup) << 54 | uint64_t(p.fp8_recipe) << 55 |
            uint64_t(p.eager_elementwise) << 57 | uint64_t(p.recompute_needed_only) << 58,
        // The named policy's tensors (12 bits each) above the micro-batch count.
        uint64_t(std::max<long long>(0, p.micro_batches())) | uint64_t(p.remat.device) << 40 | uint64_t(p.remat.offload) << 52,
        tiles(p.gmm_row_tiles.up), tiles(p.gmm_row_tiles.down)}};
}

const StepPricer::LayerEntry& StepPricer::layer(const ParallelPlan& p, LayoutEntry& lay, const CostContext& ctx) {
    const LayerKey key = layer_key(p);
    auto it = lay.layers.find(key);
    if (it != lay.layers.end()) return it->second;
    ++layer_entries_;
    LayerEntry& e = lay.layers[key];
    const LayerOps L = layer_ops(m_, p), E = embedding_ops(m_, p), H = head_ops(m_, p);
    std::vector<Op> back = L.recompute;
    back.insert(back.end(), L.backward.begin(), L.backward.end());
    e.fwd = pass_sums(L.forward, ctx);
    e.bwd = pass_sums(back, ctx);
    e.emb_f = pass_sums(E.forward, ctx), e.emb_b = pass_sums(E.backward, ctx);
    e.head_f = pass_sums(H.forward, ctx), e.head_b = pass_sums(H.backward, ctx);
    // Delayed scaling's per-region ops, for the amaxes of a stage's layers (the buffer's size hardly matters: a few
    // KB, latency-bound).
    e.chunk_gemms = double(low_precision_gemms(L.forward)) * m_.layers / p.pp;
    const LayerOps C = chunk_ops(p, e.chunk_gemms);
    e.chunk_fwd = pass_sums(C.forward, ctx), e.chunk_bwd = pass_sums(C.backward, ctx);
    if (m_.moe.enabled()) {
        const LayerOps LM = layer_ops(m_, p, true);
        std::vector<Op> mback = LM.recompute;
        mback.insert(mback.end(), LM.backward.begin(), LM.backward.end());
        e.moe_fwd = pass_sums(LM.forward, ctx);
        e.moe_bwd = pass_sums(mback, ctx);
        // Executed FLOPs count the mean expert rank: the busiest one's skew is time, not extra work.
        e.moe_flops_mean = e.moe_fwd.flops + e.moe_bwd.flops;
        if (m_.moe.load_imbalance > 1) {
            ModelSpec even = m_;
            even.moe.load_imbalance = 1;
            const LayerOps LE = layer_ops(even, p, true);
            e.moe_flops_mean = total_flops(LE.forward) + total_flops(LE.recompute) + total_flops(LE.backward);
        }
    }
    e.act_bytes = double(p.micro_batch) * m_.seq_len / p.cp * m_.hidden * 2;
    return e;
}

void StepPricer::describe_networks(const ParallelPlan& p, const LayoutEntry& lay, double act_bytes,
                                   StepCosts& out) const {
    // The algorithm named for each group is the closed form's choice, which both backends lower the same way
    // (asking the SimGrid backend here would simulate a collective the step never issues).
    auto describe = [&](const char* name, int size, const GroupRef& g, Collective c, double bytes) {
        if (size > 1) {
            const GroupNetwork net = place_group(sys_, g.sizes, g.which);
            out.networks.push_back({name, size, net.describe(), collective_cost(c, bytes, net).algorithm,
                                    sys_.is_gpu && inside_one_nvlink_domain(sys_, g.sizes, g.which)});
        }
    };
    describe("tp", p.tp, lay.tp, p.sp ? Collective::reduce_scatter : Collective::all_reduce, act_bytes);
    describe("cp", p.cp, lay.cp, Collective::all_gather, act_bytes);
    const double grad_bytes_dev = out.stages.front().params / p.tp * p.grad_reduce_bytes;
    describe("dp", lay.grad_ranks, lay.dp, grad_sync_collective(p), grad_bytes_dev);
    if (p.pp > 1)
        out.networks.push_back({"pp", p.pp, neighbour_link(sys_, lay.pp.sizes, lay.pp.which).name, "p2p",
                                sys_.is_gpu && inside_one_nvlink_domain(sys_, lay.pp.sizes, lay.pp.which)});
    if (m_.moe.enabled() && p.ep > 1)
        describe("ep", p.ep, lay.ep, Collective::all_to_all,
                 act_bytes / p.tp * m_.moe.top_k);  // one micro-batch's dispatch from one rank
}

void StepPricer::price(const ParallelPlan& p, StepCosts& out, bool detail) {
    out.reject = Reject::none;
    out.reasons.clear(), out.reason_paths.clear(), out.networks.clear();
    out.layer_forward.clear(), out.layer_backward.clear();
    out.memory = MemoryBreakdown{};
    const ChipSpec& chip = chip_for(p);
    if (detail) {
        // Every plan reports which GEMM efficiency it ran at: an override (fitting), else a profile for this chip
        // and precision class, else the catalog's stated default; or a measured kernel profile.
        out.peak_name = chip.name + " dense bf16 peak";
        out.efficiency_source = in_fp8_efficiency_class(p.precision) ? fp8_source_ : bf16_source_;
        if (p.precision == Precision::int8)
            out.efficiency_source += "; int8 GEMMs at the 16-bit GEMM efficiency (no published int8 fit)";
        if (p.precision == Precision::fp4)
            out.efficiency_source += "; fp4 GEMMs at the fp8 GEMM efficiency (no published fp4 fit)";
        if (opt_.kernels)
            out.efficiency_source = "kernel profile " + opt_.kernels->file + " (measured on " + opt_.kernels->device +
                                    "): each op from its measured kernel, else the profile's fitted model for its kind";
    }
    auto fail = [&](Reject why, std::string sentence, const char* path) {
        if (out.reject == Reject::none) out.reject = why;
        if (detail) out.reasons.push_back(std::move(sentence)), out.reason_paths.push_back(path);
    };
    // (check_split makes a sentence only for a failure; without detail `fail` drops it.)
    check_split(m_, sys_, p, chip, [&](std::string s, const char* path) { fail(Reject::split, std::move(s), path); },
                opt_.budget);
    if (opt_.kernels && opt_.kernels->chip != chip.id)
        fail(Reject::split,
             "the kernel profile " + opt_.kernels->file + " was measured for chip \"" + opt_.kernels->chip +
                 "\", the plan runs on \"" + chip.id + "\"",
             "$.system");
    // An accelerator's peak is the vendor's: a profile faster than it is not of this chip (a CPU's is nominal).
    if (opt_.kernels && chip.kind != ChipKind::cpu) {
        const double peak = std::max({chip.peak_bf16_flops_per_s, chip.peak_fp16_flops_per_s, chip.peak_fp8_flops_per_s,
                                      chip.peak_int8_ops_per_s, chip.peak_fp4_flops_per_s});
        if (opt_.kernels->fastest_flops_per_s > peak)
            fail(Reject::split,
                 fmt::format("the kernel profile {} achieves {:.3g} FLOP/s in {}, above {}'s peak of {:.3g}: it was not "
                             "measured on this chip, or (from a trace) not on this scenario's model and plan",
                             opt_.kernels->file, opt_.kernels->fastest_flops_per_s, opt_.kernels->fastest_what, chip.id,
                             peak),
                 "$.system");
    }
    if (out.reject != Reject::none && !detail) return;
    LayoutEntry& lay = layout(p);
    if (detail && lay.compute_scale > 1)
        out.efficiency_source += fmt::format("; every kernel at the slowest of {} ranks: x{:.3f} (system.rank_speed_cv "
                                             "{:g} x E[max of {} normal draws] {:.2f})",
                                             p.chips(), lay.compute_scale, sys_.rank_speed_cv, p.chips(),
                                             (lay.compute_scale - 1) / sys_.rank_speed_cv);
    if (!lay.placeable)
        for (const auto& [why, path] : lay.why_not) fail(Reject::placement, why, path);
    if (lay.placeable && p.tp_comm_overlap != TpOverlap::none && !lay.tp_in_one_domain)
        fail(Reject::placement,
             "TP communication overlap needs the TP group inside one NVLink domain (Transformer Engine userbuffers): "
             "this TP group of " + std::to_string(p.tp) + " crosses the " + std::to_string(sys_.domain_gpus()) +
                 "-GPU NVLink domains of " + sys_.node.id + " over the NICs; set parallel.tp_comm_overlap to \"none\"",
             "$.parallel.tp_comm_overlap");
    if (!out.structural_ok()) return;  // split, placement and size rules: nothing below is well defined

    const int P = p.pp, v = p.vpp, nchunks = P * v;
    const long long M = p.global_batch / (p.micro_batch * p.dp);
    const bool moe = m_.moe.enabled();
    const int zero_shard = p.zero >= 1 ? (p.zero >= 3 ? lay.fsdpnet.size() : lay.grad_ranks) : 1;
    const double expert_shard = double(p.ep) * p.expert_tp();
    out.schedule = p.schedule, out.pp = P, out.vpp = v, out.micro_batches = M;

    // --- pipeline partition: layers per (stage, chunk); remainders go to the earliest chunks -----------------
    // Chunk c of stage s is model chunk c P + s; chunk 0 of stage 0 holds the embedding, the last model chunk the
    // head (and, tied, a copy of the embedding's weights on the last stage).
    auto moe_count = [&](int first, int n) { return moe_prefix_[first + n] - moe_prefix_[first]; };
    // Stage s's layers and parameters, and (with `chunks`) its chunks' layer counts.
    auto partition = [&](int s, StageCosts& st, ChunkCosts* chunks) {
        st = StageCosts{};
        for (int c = 0; c < v; ++c) {
            const int mc = c * P + s, nl = chunk_layers(m_.layers, nchunks, mc);
            const int nm = moe_count(chunk_first_layer(m_.layers, nchunks, mc), nl);
            if (chunks) chunks[c].layers = nl, chunks[c].moe_layers = nm;
            st.layers += nl, st.moe_layers += nm;
            st.params += nm * moe_layer_params_ + (nl - nm) * dense_layer_params_;
            st.expert_params += nm * routed_params_per_moe_layer_;
        }
        if (s == 0) st.params += m_.embedding_params();
        if (s == P - 1) st.params += m_.output_params() + (m_.tied_embeddings && P > 1 ? double(m_.vocab) * m_.hidden : 0);
    };

    // --- memory on the busiest stage ---------------------------------------------------------------------------
    // Stage 0 holds the most activations and the remainder layers, the last the logits; with MoE layers after
    // dense ones the busiest can be any stage, so then all are checked. (Before the rest of the partition: most
    // plans a search screens stop here.)
    for (int s = 0; s < P; s = (moe || s == P - 1) ? s + 1 : P - 1) {
        StageCosts st;
        partition(s, st, nullptr);
        MemoryInputs in;
        in.stage_params = st.params;
        in.layers_on_stage = st.layers;
        in.zero_shard = zero_shard;
        in.last_stage = s == P - 1;
        in.expert_params = st.expert_params;
        in.moe_layers = st.moe_layers;
        in.expert_zero_shard = p.zero >= 1 ? p.edp() : 1;
        in.in_flight_microbatches = in_flight_microbatches(p, s, M);
        if (p.offload_layers > 0 && s == 0) {  // the model's first layers (check_split: no pipelining)
            in.offload_layers = std::min(p.offload_layers, st.layers);
            in.offload_moe_layers = moe_count(0, in.offload_layers);
        }
        if (sys_.is_gpu) in.host_bytes_per_device = sys_.node.host_memory_bytes_per_gpu();
        if (p.per_op_selective()) {
            // What TorchTitan's per-op policy keeps is counted over the layer's ops: once per layout and layer key.
            auto [at, added] = lay.alternate_saved.try_emplace(layer_key(p));
            if (added)
                at->second = {alternate_selective_saved_bytes(m_, p, false),
                              moe ? alternate_selective_saved_bytes(m_, p, true) : 0.0};
            in.alternate_saved_bytes = at->second.first, in.alternate_saved_moe_bytes = at->second.second;
        }
        MemoryBreakdown mem = memory_per_device(m_, p, chip, in);
        if (mem.total_bytes > out.memory.total_bytes) out.memory = mem;
    }
    if (!out.memory.fits) {
        char buf[400] = "";
        // With its parts, so that the reader sees what to cut (activations: recompute or smaller micro-batches;
        // states: ZeRO or more model parallelism).
        const double g = 1ull << 30;
        const MemoryBreakdown& mm = out.memory;
        if (detail && mm.total_bytes > mm.hbm_bytes)
            std::snprintf(buf, sizeof buf,
                          "needs %.2f GiB per device (weights %.1f, master weights %.1f, gradients %.1f, optimizer "
                          "states %.1f, activations %.1f, transient %.1f, workspace %.1f) but %s has %.2f GiB of HBM",
                          mm.total_bytes / g, mm.weights_bytes / g, mm.master_bytes / g, mm.gradients_bytes / g,
                          mm.optimizer_bytes / g, mm.activations_bytes / g, mm.transient_bytes / g,
                          mm.workspace_bytes / g, chip.name.c_str(), mm.hbm_bytes / g);
        else if (detail)
            std::snprintf(buf, sizeof buf,
                          "offloads %.2f GiB of activations per device to host memory, which has %.2f GiB per device",
                          mm.host_offload_bytes / g, mm.host_bytes / g);
        // The JSON path the reason is about: the part that dominates the need (activations: the micro-batch and
        // recomputation; weights, gradients and optimizer states: the split and ZeRO stage).
        const double states = mm.weights_bytes + mm.master_bytes + mm.gradients_bytes + mm.optimizer_bytes;
        fail(Reject::memory, buf,
             mm.total_bytes <= mm.hbm_bytes                             ? "$.training.offload_layers"
             : mm.activations_bytes + mm.transient_bytes >= states ? "$.batch.micro_batch"
                                                                    : "$.parallel");
        if (!detail) return;
    }
    out.chunks.assign(size_t(nchunks), ChunkCosts{});
    out.stages.resize(size_t(P));
    for (int s = 0; s < P; ++s) partition(s, out.stages[s], &out.chunks[size_t(s) * v]);

    // --- one layer's passes, and the ends -------------------------------------------------------------------
    CostContext ctx;
    ctx.chip = &chip;
    ctx.plan = &p;
    ctx.timer = &timer_;
    ctx.kernels = opt_.kernels;
    ctx.tp = lay.tp, ctx.cp = lay.cp, ctx.fsdp = lay.fsdp, ctx.ep = lay.ep, ctx.etp = lay.etp;
    ctx.compute_scale = lay.compute_scale;
    const LayerEntry& le = layer(p, lay, ctx);
    // FSDP gathers a layer's shards (the dense part's and the local experts'), the mean over the layers, on a side
    // stream under the pass; the backward also reduce-scatters its gradients.
    double fsdp_fwd_s = 0, fsdp_bwd_s = 0;
    if (p.zero >= 3 && lay.fsdpnet.size() > 1) {
        const double layer_params_dev = fsdp_layer_params_per_device(m_, p);
        fsdp_fwd_s = collective_s(Collective::all_gather, layer_params_dev * p.param_gather_bytes, lay.fsdp, lay.fsdpnet);
        fsdp_bwd_s = fsdp_fwd_s + collective_s(Collective::reduce_scatter, layer_params_dev * p.grad_reduce_bytes,
                                               lay.fsdp, lay.fsdpnet);
    }
    const PassCost lf = finish_pass(le.fwd, chip, fsdp_fwd_s), lb = finish_pass(le.bwd, chip, fsdp_bwd_s);
    const PassCost ef = finish_pass(le.emb_f, chip), eb = finish_pass(le.emb_b, chip);
    const PassCost hf = finish_pass(le.head_f, chip), hb = finish_pass(le.head_b, chip);
    const PassCost mf = moe ? finish_pass(le.moe_fwd, chip, fsdp_fwd_s) : PassCost{};
    const PassCost mb = moe ? finish_pass(le.moe_bwd, chip, fsdp_bwd_s) : PassCost{};
    const PassCost cf = finish_pass(le.chunk_fwd, chip), cb = finish_pass(le.chunk_bwd, chip);

    // --- gradient synchronization: bucketed under each chunk's last backward, or after the flush ---------------
    out.dp_sync = lay.grad_ranks > 1 && p.zero < 3;
    out.dcn_sync = p.zero >= 3 && lay.dcnnet.size() > 1;
    out.bucketed = (out.dp_sync || out.dcn_sync) && p.dp_overlap && !(out.dcn_sync && !p.dcn_sync_overlap);
    const double act_bytes = le.act_bytes;
    // Each TP rank sends 1/tp of the boundary tensor where the stack scatters it or it is sequence-sharded already;
    // DeepSpeed's PipelineEngine sends the whole tensor from every TP rank.
    const bool p2p_sharded =
        p.pp_p2p == PipelineP2p::scatter_gather || (p.pp_p2p == PipelineP2p::sequence_shard && p.sp);
    const double p2p_bytes = act_bytes / (p2p_sharded && p.tp > 1 ? p.tp : 1);
    const bool shared_links = timer_.backend() != NetworkBackend::analytical && out.bucketed;
    auto sync_s = [&](double params_dev) {
        if (out.dp_sync) {
            const Collective c = grad_sync_collective(p);
            const double bytes = params_dev * p.grad_reduce_bytes;
            if (!shared_links) return collective_s(c, bytes, lay.dp, lay.dpnet);
            // A bucketed sync runs while the backward goes on: its pipeline sends and TP collectives share links
            // with it (the SimGrid backend measures that; the analytical one ignores it).
            std::vector<CollectiveTimer::Traffic> during;
            if (P > 1) during.push_back({Collective::send_recv, p2p_bytes, lay.pp});
            if (p.tp > 1)
                during.push_back({p.sp ? Collective::reduce_scatter : Collective::all_reduce, act_bytes, lay.tp});
            return timer_.cost_with({c, bytes, lay.dp}, during).time_s;
        }
        if (out.dcn_sync)  // HSDP: each chip's FSDP shard all-reduced across slices
            return collective_s(Collective::all_reduce, params_dev / lay.fsdpnet.size() * p.grad_reduce_bytes, lay.dcn,
                                lay.dcnnet);
        return 0.0;
    };
    // Gradients of routed experts are reduced over the expert data-parallel group, the rest over data parallelism.
    auto expert_sync_s = [&](double expert_params_dev) {
        if (expert_params_dev <= 0 || p.edp() <= 1) return 0.0;
        return collective_s(grad_sync_collective(p),
                            expert_params_dev * p.grad_reduce_bytes, lay.edp, lay.edpnet);
    };
    // Chunks differ only by their layer count (two values) and the embedding / head ends: remember the last few.
    struct SyncMemo { double params = -1, experts = -1, s = 0; } memo[4];
    auto chunk_sync_s = [&](double params_dev, double experts_dev) {
        for (auto& e : memo)
            if (e.params == params_dev && e.experts == experts_dev) return e.s;
        std::rotate(memo, memo + 3, memo + 4);
        memo[0] = {params_dev, experts_dev, sync_s(params_dev) + expert_sync_s(experts_dev)};
        return memo[0].s;
    };

    // --- the pipeline's stage-to-stage transfer of one micro-batch's boundary activation (or its gradient) ------
    out.p2p_s = 0;
    if (P > 1) {
        // Analytically as CollectiveTimer::cost times it, on the cached link (no map lookup per plan).
        out.p2p_s = timer_.backend() == NetworkBackend::analytical
                        ? p2p_cost(p2p_bytes, lay.pp_link).time_s
                        : timer_.cost(Collective::send_recv, p2p_bytes, lay.pp).time_s;
    }
    // Blocking send/recv (DeepSpeed's p2p.send / p2p.recv, issued one instruction at a time between the passes):
    // a stage spends each transfer it takes part in on its compute stream — in the steady state the receive of the
    // input and the send of the output of every forward, the same for every backward's gradient — so the transfers
    // join the passes and the side-stream hop is zero. (A fill/drain hop then counts the transfer on both sides of
    // it; the steady state, m of the m + P - 1 slots, is exact.)
    const double blocking_p2p_s = p.pp_p2p == PipelineP2p::full_blocking ? out.p2p_s : 0;
    if (blocking_p2p_s > 0) out.p2p_s = 0;

    // --- activation offload: each offloaded layer's saved tensors copied to the host during the forward and back
    // for the backward, on a copy engine under the next layer's compute (Transformer Engine's offload handler
    // double-buffers a layer ahead); what a layer's pass cannot hide is waited for. The link's one-way rate at a
    // stated 80% (pinned host memory copies; as memory_bw_fraction for HBM).
    // Dense and MoE layers separately: their sets and passes differ (the offloaded layers are the model's first).
    double offload_fwd_s = 0, offload_bwd_s = 0;
    if (p.offload_layers > 0 && sys_.is_gpu && sys_.node.host_link_bytes_per_s > 0) {
        const double link = kHostCopyFraction * sys_.node.host_link_bytes_per_s;
        const int k = std::min(p.offload_layers, m_.layers), k_moe = moe ? moe_count(0, k) : 0, k_dense = k - k_moe;
        const double dense_copy_s = layer_activation_bytes(m_, p) / link;
        offload_fwd_s = k_dense * std::max(0.0, dense_copy_s - lf.time_s);
        offload_bwd_s = k_dense * std::max(0.0, dense_copy_s - lb.time_s);
        if (k_moe > 0) {
            const double moe_copy_s = layer_activation_bytes(m_, p, true) / link;
            offload_fwd_s += k_moe * std::max(0.0, moe_copy_s - mf.time_s);
            offload_bwd_s += k_moe * std::max(0.0, moe_copy_s - mb.time_s);
        }
    }

    // --- per (stage, chunk): one micro-batch's passes and the chunk's gradient buckets ---------------------------
    for (int s = 0; s < P; ++s) {
        for (int c = 0; c < v; ++c) {
            ChunkCosts& ck = out.chunks[size_t(s) * v + c];
            const int mc = c * P + s, nm = ck.moe_layers, nd = ck.layers - nm;
            ck.fwd_s = nd * lf.time_s + nm * mf.time_s + cf.time_s;
            ck.fwd_exposed_s = nd * lf.exposed_comm_s + nm * mf.exposed_comm_s + cf.exposed_comm_s;
            ck.bwd_s = nd * lb.time_s + nm * mb.time_s + cb.time_s;
            ck.bwd_exposed_s = nd * lb.exposed_comm_s + nm * mb.exposed_comm_s + cb.exposed_comm_s;
            const double experts = nm * routed_params_per_moe_layer_;
            double params = nm * moe_layer_params_ + nd * dense_layer_params_ - experts;
            if (mc == 0) ck.fwd_s += ef.time_s, ck.fwd_exposed_s += ef.exposed_comm_s, ck.bwd_s += eb.time_s,
                         ck.bwd_exposed_s += eb.exposed_comm_s, params += m_.embedding_params();
            if (mc == nchunks - 1) ck.fwd_s += hf.time_s, ck.fwd_exposed_s += hf.exposed_comm_s, ck.bwd_s += hb.time_s,
                                   ck.bwd_exposed_s += hb.exposed_comm_s, params += m_.output_params();
            if (mc == 0 && (offload_fwd_s > 0 || offload_bwd_s > 0)) {  // (no pipelining: one chunk)
                ck.fwd_s += offload_fwd_s, ck.fwd_exposed_s += offload_fwd_s;
                ck.bwd_s += offload_bwd_s, ck.bwd_exposed_s += offload_bwd_s;
            }
            if (blocking_p2p_s > 0) {
                const double t = blocking_p2p_s * ((mc > 0) + (mc < nchunks - 1));  // in from below, out to above
                ck.fwd_s += t, ck.fwd_exposed_s += t, ck.bwd_s += t, ck.bwd_exposed_s += t;
            }
            if (p.grad_accum_bytes_per_param > 0) {
                // A separate accumulation pass over the chunk's local gradients after each micro-batch's backward
                // (memory-bound: every byte read or written once).
                const double local = (params - experts) / p.tp + experts / expert_shard;
                ck.bwd_s += local * p.grad_accum_bytes_per_param / (chip.hbm_bytes_per_s * chip.eff.memory_bw_fraction) *
                            lay.compute_scale;
            }
            if (out.bucketed) {
                ck.pieces = std::clamp(ck.layers, 1, 16);
                ck.grad_sync_s = chunk_sync_s(params / p.tp, experts / expert_shard);
                // A bucket's sync overlaps the next backward piece and slows it (shared SMs / HBM).
                ck.slowdown_s = chip.eff.comm_interference_fraction * std::min(ck.grad_sync_s, ck.bwd_s);
            }
        }
    }

    // --- per stage, after its last backward: flush sync, optimizer, parameter gather ---------------------------
    for (int s = 0; s < P; ++s) {
        StageCosts& st = out.stages[s];
        if ((out.dp_sync || out.dcn_sync) && !out.bucketed)
            st.flush_sync_s = sync_s((st.params - st.expert_params) / p.tp) + expert_sync_s(st.expert_params / expert_shard);
        const double shard = (st.params - st.expert_params) / p.tp / zero_shard +
                             st.expert_params / expert_shard / (p.zero >= 1 ? p.edp() : 1);
        st.optimizer_s = optimizer_time_s(shard, p, chip, opt_.kernels) * lay.compute_scale;
        if (p.zero >= 1 && p.zero < 3 && lay.grad_ranks > 1 && !p.param_gather_overlap)
            st.param_gather_s = collective_s(Collective::all_gather, st.params / p.tp * 2, lay.dp, lay.dpnet);
    }

    // --- what utilization is measured by ----------------------------------------------------------------------
    const int moe_total = moe_prefix_[m_.layers];
    const double per_mb_device = (m_.layers - moe_total) * (lf.flops + lb.flops) + moe_total * le.moe_flops_mean +
                                 ef.flops + eb.flops + hf.flops + hb.flops;  // one pipeline's device
    out.tokens_per_step = double(p.global_batch) * m_.seq_len;
    out.model_flops_per_step = out.tokens_per_step * flops_per_token_;
    out.model_flops_causal_per_step = out.tokens_per_step * flops_per_token_causal_;
    out.hardware_flops_per_step = per_mb_device * double(M) * p.dp * p.tp * p.cp;
    out.peak_flops_per_s = chip.peak_bf16_flops_per_s;
    out.utilization_ceiling = utilization_ceiling(chip, p.precision);
    // A CPU's catalog peak is nominal (the calibration host stands for any machine): what its own profile measured
    // bounds it instead where that is faster.
    if (opt_.kernels && chip.kind == ChipKind::cpu)
        out.utilization_ceiling =
            std::max(out.utilization_ceiling, opt_.kernels->fastest_flops_per_s / chip.peak_bf16_flops_per_s);
    out.chips = sys_.chips;

    if (detail) {
        describe_networks(p, lay, le.act_bytes, out);
        // The reports show one layer's ops: an MoE layer, the common one, in a mixture of experts.
        const LayerOps L = layer_ops(m_, p, moe);
        std::vector<Op> back = L.recompute;
        back.insert(back.end(), L.backward.begin(), L.backward.end());
        out.layer_forward = op_timings(L.forward, ctx);
        out.layer_backward = op_timings(back, ctx);
        // The per-chunk ops, once per model chunk and micro-batch, after the layer's.
        const LayerOps C = chunk_ops(p, le.chunk_gemms);
        for (auto t : op_timings(C.forward, ctx)) t.name += " (per chunk)", out.layer_forward.push_back(t);
        for (auto t : op_timings(C.backward, ctx)) t.name += " (per chunk)", out.layer_backward.push_back(t);
    }
}

StepCosts price_step(const ModelSpec& m, const SystemSpec& sys, const ParallelPlan& p, const CollectiveTimer& timer,
                     const PricingOptions& opt) {
    StepPricer pricer(m, sys, timer, opt);
    StepCosts out;
    pricer.price(p, out, true);
    return out;
}

}  // namespace podsim
