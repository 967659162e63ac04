// Time of ops on a chip (roofline with the chip's stated efficiencies) and of a whole pass with its overlaps.
#pragma once
#include <vector>

#include "hardware/chip.hpp"
#include "hardware/calibration/kernel_profile.hpp"
#include "sim/network_backend.hpp"
#include "models/layer_ops.hpp"

namespace podsim {

struct CostContext {
    const ChipSpec* chip = nullptr;
    const ParallelPlan* plan = nullptr;
    const CollectiveTimer* timer = nullptr;
    const calib::KernelProfile* kernels = nullptr;  // measured kernels of this chip: they time the ops they cover
    GroupRef tp, cp, fsdp, ep, etp;  // ep/etp: the expert layout's groups (MoE layers)
    // The slowest rank's compute time over the mean rank's (models/straggler.hpp): scales every kernel, not the
    // collectives (which wait for it at their start, not during them).
    double compute_scale = 1;
};

struct PassCost {
    double time_s = 0;          // wall time of the pass on the device's compute stream
    double compute_s = 0;       // kernels (GEMMs, attention, elementwise)
    double exposed_comm_s = 0;  // collectives not hidden under compute
    double flops = 0;           // executed
};

double op_time_s(const Op& o, const CostContext& c);
// An op's time from a kernel profile: the measured kernel of the same op, scaled to its size; else the profile's
// fitted model for its kind; nullopt when the profile cannot say (then the roofline applies).
// A GEMM is timed as `chip`'s MXU / tensor cores see it (op_cost.cpp: a grouped GEMM's shared-tile work and row tile).
std::optional<double> profiled_time_s(const Op& o, const calib::KernelProfile& k, const ChipSpec& chip);
// `background_comm_s`: per-pass collectives on a side stream (FSDP gathers) that overlap the whole pass.
PassCost pass_cost(const std::vector<Op>& ops, const CostContext& c, double background_comm_s = 0);

// pass_cost in two halves, so that the planner times a pass once and applies different side-stream traffic to it:
// the op times summed by role, then the overlap rules.
struct PassSums {
    double compute_s = 0, attention_s = 0;                     // kernels; the attention core among them
    double hideable_comm_s = 0, blocking_comm_s = 0, cp_comm_s = 0;
    double flops = 0;
};
PassSums pass_sums(const std::vector<Op>& ops, const CostContext& c);
PassCost finish_pass(const PassSums& s, const ChipSpec& chip, double background_comm_s = 0);

}  // namespace podsim

namespace podsim {

// One row per op of a pass, for reports that show where a layer's time goes.
struct OpTiming {
    std::string name;
    OpKind kind;
    double time_s;
    double flops;
    double bytes;
    // Collectives: which group, which collective, and whether it may hide under the pass's compute.
    CommGroup group = CommGroup::tp;
    CommKind comm = CommKind::all_reduce;
    bool overlappable = false;
};
std::vector<OpTiming> op_timings(const std::vector<Op>& ops, const CostContext& c);

}  // namespace podsim
