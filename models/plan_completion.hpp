// Completes a partial plan: the planner's screening (every plan of the space, timed by the closed form) restricted
// to the free fields, the given ones pinned, and the software stack's limits (ZeRO stages, interleaving, sequence
// parallelism, fp8) respected; the best feasible plan by step time wins (ties: the first enumerated). Used for
// scenarios and published records that leave settings out.
#pragma once
#include <string>
#include <vector>

#include "hardware/system.hpp"
#include "models/plan.hpp"
#include "models/software_stack.hpp"
#include "models/step_costs.hpp"
#include "models/transformer.hpp"
#include "sim/network_backend.hpp"

namespace podsim {

struct CompletionOptions {
    bool use_profiles = true;
    SimBudget budget;
    const calib::KernelProfile* kernels = nullptr;  // (budget.max_completion_plans bounds the screening)
};

struct PlanCompletion {
    bool found = false;               // a feasible plan exists; false: `plan` is the fallback, `reason` says why
    ParallelPlan plan;                // completed
    std::vector<std::string> chosen;  // "batch.micro_batch = 2", one per free field, in PlanField order
    size_t plans_tried = 0, plans_feasible = 0;
    std::string reason;
};

// With no free structural field, returns the plan as given (nothing tried). Without a feasible plan, the fallback
// fills the free fields with the most memory-frugal values (full recomputation, the highest ZeRO stage the stack
// has, micro-batch 1, sequence parallelism where allowed) and says so.
// Whether activation offload can be chosen for this partial plan: a stack with whole-layer offload, a system with
// a host link, and neither a stated pipeline (pp > 1) nor stated recomputation.
bool offload_choosable(const PartialPlan& pp, const SystemSpec& sys, const SoftwareStack& stack);
// A free offload that cannot be chosen is settled to none and no longer free (so that a plan stated in full is
// not completed for it). Returns "" or, for a stated offload the stack does not have, why.
std::string settle_offload(PartialPlan& pp, const SystemSpec& sys, const SoftwareStack& stack);

PlanCompletion complete_plan(const ModelSpec& m, const SystemSpec& sys, const PartialPlan& partial,
                             const SoftwareStack& stack, const CompletionOptions& opt = {});

}  // namespace podsim
