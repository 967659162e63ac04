// Every figure podsim prints is checked against its physical range first: a step time that is not a positive
// finite number or a utilization outside (0, 1] is a bug in podsim, reported as an internal error naming the plan,
// never printed as a result.
#pragma once
#include <stdexcept>
#include <string>

#include "hardware/chip.hpp"
#include "models/plan.hpp"

namespace podsim {

struct StepResult;

// A broken invariant inside podsim (not bad input): main reports it as an internal error (exit 4).
class InternalError : public std::logic_error {
public:
    using std::logic_error::logic_error;
};

// The plan in one line, for error messages ("dp 8 tp 4 pp 2 vpp 1 cp 1 ep 1 zero 1 mb 2 gbs 512").
std::string plan_label(const ParallelPlan& p);

// The most MFU/HFU can be. Both are measured against the dense bf16 peak (kMfuConvention), so a plan whose GEMMs run
// in fp8, int8 or fp4 (or fp16 on a chip where that is faster) can exceed 1: the bound is that precision's peak over
// bf16's.
double utilization_ceiling(const ChipSpec& chip, Precision precision);

// Throws InternalError when a feasible result has a figure out of range: step time and tokens/s finite and > 0;
// every breakdown part, memory figure and FLOP count finite and >= 0; MFU, causal MFU and HFU in (0, ceiling].
void check_physical(const StepResult& r, const ParallelPlan& p, double ceiling);

// A named figure (dollars, days, goodput) must be finite and within [lo, hi].
void check_figure(const char* name, double value, double lo, double hi, const std::string& context);

}  // namespace podsim
