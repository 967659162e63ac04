#include "models/op_cost.hpp"

#include <algorithm>
#include <cmath>

#include "sim/collectives.hpp"

namespace podsim {

namespace {

// The tensor-core / MXU peak a GEMM in `f` runs at, and the large-GEMM efficiency against it. No published fit
// exists for int8 or fp4 GEMMs in training: int8 takes the 16-bit fraction (the MXU / tensor cores are kept busy
// by the same means at either width) and fp4 the fp8 one (Blackwell's block-scaled MMAs, like fp8's); stated
// assumptions (README). A format the chip lacks runs at the 16-bit rate (check_split rejects such plans first).
struct GemmRate {
    double peak_flops_per_s, fraction;
};
GemmRate gemm_rate(const ChipSpec& chip, NumFormat f) {
    const auto& e = chip.eff;
    if (f == NumFormat::fp8 && chip.has_fp8()) return {chip.peak_fp8_flops_per_s, e.fp8_matmul_peak_fraction};
    if (f == NumFormat::fp4 && chip.has_fp4()) return {chip.peak_fp4_flops_per_s, e.fp8_matmul_peak_fraction};
    if (f == NumFormat::int8 && chip.has_int8()) return {chip.peak_int8_ops_per_s, e.matmul_peak_fraction};
    return {chip.peak_bf16_flops_per_s, e.matmul_peak_fraction};
}

// A GEMM's output elements leave the kernel as 16-bit activations or gradients (bf16 / fp16).
constexpr double kGemmOutputBytes = 2;

// Achieved fraction of peak for an M x N x K GEMM: the chip's large-GEMM efficiency times a saturation term for
// a short dimension (a 64-wide operand fills half of a 128-wide MMA tile). Wave quantization was tried and made
// the published-run errors worse (cuBLAS picks tiles and split-K to avoid it), so it is not modelled.
double matmul_efficiency(const ChipEfficiency& e, double frac, double m, double n, double k) {
    const double d = std::min({m, n, k});
    return frac * d / (d + e.matmul_half_dim);
}

// A grouped GEMM as one kernel over M-tiles of `tile` rows (MaxText's megablox and Tokamax gmm/tgmm,
// make_group_metadata in megablox/backend.py): every tile is visited once by the group owning its first row and once
// more by each further group starting inside it, the whole tile computed each time and the other groups' rows masked
// out. A group of s rows starting at a uniformly random row spans 1 + (s - 1) / tile tiles on average, so G groups
// of R rows in all cost G + (R - G) / tile tile visits against the R / tile a dense GEMM needs: R + G (tile - 1) rows
// of work. R is per device: a chip split into devices runs one kernel on each device's rows.
// The kernels are Pallas TPU kernels: MaxText on GPUs runs its experts through XLA's ragged_dot instead, not priced.
int grouped_row_tile(const Op& o, const ChipSpec& chip) {
    const int tile = o.group_row_tiles[static_cast<int>(o.pass)];
    if (chip.kind != ChipKind::tpu || tile <= 1 || o.groups <= 0 || o.group_rows <= 0) return 0;
    return tile;
}

double grouped_tile_factor(const Op& o, const ChipSpec& chip) {
    const int tile = grouped_row_tile(o, chip);
    if (tile == 0) return 1;
    const double rows = o.group_rows / chip.devices_per_chip;
    const double groups = std::min(o.groups, rows);  // at most one non-empty group per row
    return 1 + groups * (tile - 1) / rows;
}

// The dimensions the MXU sees. The tiled kernel multiplies a [tile x tk] block of rows by a [tk x tn] weight block
// per grid step (megablox gmm: lhs and rhs BlockSpecs of (tm, tk) and (tk, tn)), so a weight block is loaded for
// `tile` rows whatever the group's size: the rows dimension is the tile. That is M in the forward and input-gradient
// GEMMs and the contraction in the weight gradient (tgmm sums the rows a tile at a time), as backward_of lays them
// out. A dense GEMM keeps its own dimensions (XLA tiles it as it likes).
struct GemmDims {
    double m, n, k;
};
GemmDims mxu_dims(const Op& o, const ChipSpec& chip) {
    GemmDims d{o.m / o.chunks, o.n, o.k};
    if (const int tile = grouped_row_tile(o, chip)) (o.pass == OpPass::backward_weight ? d.k : d.m) = tile;
    return d;
}
double min_dim(const GemmDims& d) { return std::min({d.m, d.n, d.k}); }

Collective to_collective(CommKind k) {
    switch (k) {
        case CommKind::all_reduce: return Collective::all_reduce;
        case CommKind::reduce_scatter: return Collective::reduce_scatter;
        case CommKind::all_gather: return Collective::all_gather;
        case CommKind::send_recv: return Collective::send_recv;
        case CommKind::all_to_all: return Collective::all_to_all;
    }
    return Collective::all_reduce;
}

// An expert all-to-all over NVLink inside nodes and NICs across them, sent once per destination node: a token's k
// copies land on uniformly random ranks of m nodes, so (m - 1)(1 - (1 - 1/m)^k) distinct remote nodes on average
// (at most the routing's node limit, less the token's own node); each gets one copy over the NIC, and NVLink
// delivers every copy to its GPU. The two levels run at once.
double dedup_a2a_s(const Op& o, const GroupNetwork& net) {
    const NetLevel& nv = net.levels[0];
    const NetLevel& nic = net.levels[1];
    const double m = nic.size, k = o.a2a_copies;
    double remote = (m - 1) * (1 - std::pow(1 - 1 / m, k));
    if (o.a2a_node_limit > 0) remote = std::min(remote, double(o.a2a_node_limit));
    const double per_copy = o.comm_bytes / k;
    const double nic_s = per_copy * remote / nic.bytes_per_s + nic.latency_s * remote;
    const double nvlink_s = o.comm_bytes * (1 - 1 / double(nv.size * m)) / nv.bytes_per_s + nv.latency_s * (nv.size - 1);
    return std::max(nic_s, nvlink_s);
}

}  // namespace

std::optional<double> profiled_time_s(const Op& o, const calib::KernelProfile& k, const ChipSpec& chip) {
    if (o.kind == OpKind::collective) return std::nullopt;
    // Profiles key a measured kernel by the op's name and its pass (`podsim calibrate` writes the layer's GEMMs and
    // elementwise ops so; a trace-derived profile every op the trace named, the attention core's parts included).
    const char* pass = is_backward(o) ? "backward" : "forward";
    if (auto t = k.time_s(o.name, pass, o.flops, o.bytes)) return t;
    if (o.role == OpRole::attention_softmax) return 0.0;  // inside the measured attention kernel
    if (in_attention_core(o)) {
        // Attention is measured as one forward kernel; each attention op takes its share by FLOPs.
        if (auto t = k.time_s("attention", "forward", o.flops, 0)) return t;
        return k.fitted_time_s("attention", o.flops, 0, 0);
    }
    // A GEMM as the MXU sees it: a grouped GEMM's shared tiles are work the fitted dense-GEMM model does not see
    // (grouped_tile_factor), and its rows dimension is its row tile (mxu_dims).
    if (o.kind == OpKind::matmul)
        return k.fitted_time_s("matmul", o.flops * grouped_tile_factor(o, chip), o.bytes, min_dim(mxu_dims(o, chip)));
    return k.fitted_time_s("elementwise", o.flops, o.bytes, std::min({o.m, o.n, o.k}));
}

namespace {
double op_time_at_mean_rank_s(const Op& o, const CostContext& c) {
    if (c.kernels)
        if (auto t = profiled_time_s(o, *c.kernels, *c.chip)) return *t;
    const ChipSpec& chip = *c.chip;
    const auto& e = chip.eff;
    const double stream_bytes_per_s = chip.hbm_bytes_per_s * e.memory_bw_fraction;
    const double mem_s = o.bytes / stream_bytes_per_s;
    const double launch_s = o.kernels * o.chunks * e.kernel_overhead_s;
    switch (o.kind) {
        case OpKind::matmul: {
            const GemmRate r = gemm_rate(chip, o.format);
            const GemmDims d = mxu_dims(o, chip);
            double compute_s = o.flops / (r.peak_flops_per_s * matmul_efficiency(e, r.fraction, d.m, d.n, d.k)) *
                               grouped_tile_factor(o, chip);
            // A serial epilogue: each output tile is written after its K loop while the SM's tensor cores wait, so
            // the GEMM pays its output's write (16-bit elements) on top of its math. This is what makes a short
            // contraction (the attention projection's K = hidden / tp) cost more than its FLOPs say.
            if (e.gemm_epilogue_serial)
                compute_s += o.flops / (2 * d.k) * kGemmOutputBytes / stream_bytes_per_s;
            return std::max(compute_s, mem_s) + launch_s;
        }
        case OpKind::attention: {
            const double fwd_fraction = o.flash2 ? e.flash2_attention_peak_fraction : e.attention_peak_fraction;
            const double fraction = fwd_fraction * (is_backward(o) ? e.attention_backward_rate : 1.0);
            const double compute_s = o.flops / (chip.peak_bf16_flops_per_s * fraction);
            return std::max(compute_s, mem_s) + launch_s;
        }
        case OpKind::elementwise: return mem_s + launch_s;
        case OpKind::collective: {
            const GroupRef& g = o.group == CommGroup::tp    ? c.tp
                                : o.group == CommGroup::cp  ? c.cp
                                : o.group == CommGroup::ep  ? c.ep
                                : o.group == CommGroup::etp ? c.etp
                                                            : c.fsdp;
            if (o.comm == CommKind::send_recv) {
                // The CP ring exchange: n-1 steps of one block each to the next rank, i.e. a ring all-gather of
                // n blocks.
                const int n = g.sizes.at(g.which);
                if (n <= 1) return 0;
                return c.timer->cost(Collective::all_gather, o.comm_bytes * n / (n - 1), g).time_s;
            }
            if (o.comm == CommKind::all_to_all && o.a2a_copies > 0) {
                const GroupNetwork& net = c.timer->network(g);
                if (net.levels.size() == 2 && net.levels[0].kind == LevelKind::nvlink) return dedup_a2a_s(o, net);
            }
            return c.timer->cost(to_collective(o.comm), o.comm_bytes, g).time_s;
        }
    }
    return 0;
}

}  // namespace

double op_time_s(const Op& o, const CostContext& c) {
    const double t = op_time_at_mean_rank_s(o, c);
    return o.kind == OpKind::collective ? t : t * c.compute_scale;
}

PassSums pass_sums(const std::vector<Op>& ops, const CostContext& c) {
    PassSums r;
    for (const auto& o : ops) {
        const double t = op_time_s(o, c);
        if (o.kind == OpKind::collective) {
            if (o.group == CommGroup::cp && o.overlappable) r.cp_comm_s += t;  // the ring, under attention
            else if (o.overlappable) r.hideable_comm_s += t;
            else r.blocking_comm_s += t;
        } else {
            r.compute_s += t;
            r.flops += o.flops;
            if (in_attention_core(o)) r.attention_s += t;
        }
    }
    return r;
}

PassCost finish_pass(const PassSums& s, const ChipSpec& chip, double background_comm_s) {
    PassCost r;
    r.compute_s = s.compute_s;
    r.flops = s.flops;
    // CP ring transfers hide under the attention core; overlapped TP collectives and side-stream FSDP gathers
    // hide under the rest of the pass' kernels. What does not fit under compute is exposed.
    const double cp_exposed = std::max(0.0, s.cp_comm_s - s.attention_s);
    const double side = s.hideable_comm_s + background_comm_s;
    const double side_exposed = std::max(0.0, side - s.compute_s);
    // Overlap is not free: communication kernels take SMs and HBM bandwidth from the compute they hide under.
    const double overlapped = std::min(side, s.compute_s) + std::min(s.cp_comm_s, s.attention_s);
    r.compute_s += chip.eff.comm_interference_fraction * overlapped;
    r.exposed_comm_s = s.blocking_comm_s + cp_exposed + side_exposed;
    r.time_s = r.compute_s + r.exposed_comm_s;
    return r;
}

PassCost pass_cost(const std::vector<Op>& ops, const CostContext& c, double background_comm_s) {
    return finish_pass(pass_sums(ops, c), *c.chip, background_comm_s);
}

}  // namespace podsim

namespace podsim {

std::vector<OpTiming> op_timings(const std::vector<Op>& ops, const CostContext& c) {
    std::vector<OpTiming> out;
    for (const auto& o : ops)
        out.push_back({o.name, o.kind, op_time_s(o, c), o.flops, o.kind == OpKind::collective ? o.comm_bytes : o.bytes,
                       o.group, o.comm, o.overlappable});
    return out;
}

}  // namespace podsim
