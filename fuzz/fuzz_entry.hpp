// One fuzz input through podsim's real readers and on into plan building and one simulated step. The libFuzzer
// targets (fuzz/fuzz_target.cpp) and the regression test (tests/test_fuzz_regressions.cpp) both call run_input, so
// a kept crasher replays exactly the path the fuzzer took.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace podsim::fuzz {

enum class Target { scenario, published_run, sweep, claim };

const char* to_string(Target t);                          // "scenario", "published_run", "sweep", "claim"
std::optional<Target> target_from_name(std::string_view name);

// How an input ended when it ended well. Anything else is a finding: an exception other than InputError escapes
// run_input (InternalError from a result out of its physical range included), or the process crashes, hangs or
// runs out of memory.
enum class Outcome {
    input_error,  // the reader (or a later check) threw InputError: bad input, reported with file and JSON path
    infeasible,   // read fine; the plan is impossible and the result says why
    simulated,    // read fine; a feasible step was simulated and its figures are in range
};
const char* to_string(Outcome o);

// The bytes are the text of one input file of the target's kind:
//  scenario       parse_json_text + scenario_from_json, then simulate_step and the closed form (StepEstimator)
//  published_run  load_published_runs (a JSON array, as in shared/validation), then simulate_published of run 0
//  sweep          load_sweep (its "scenario" resolves against a private copy of scenarios/), then simulate_step and
//                 the closed form of the grid's first point (no search: one point, one plan, cheap)
//  claim          load_claim, then its scenario (only one inside the private copy of scenarios/) through
//                 simulate_step, then check_claim
// Simulations run under a small SimBudget (kMaxTasks, kMaxMemoryBytes) so that a huge plan must be refused by
// the budget check rather than allocated.
Outcome run_input(Target t, std::string_view bytes);

// 400k tasks: a step of 2,306 micro-batches on 192 pipeline stages (~0.9M compute tasks and their sends; found by
// the CI fuzz run of stop 23) took 9.4 s under ASan + UBSan at -O1, at libFuzzer's 10 s per-input timeout (1.3 s
// in a release build). Big simulations are bench's business; the fuzzers look for wrong answers and crashes.
inline constexpr long long kMaxTasks = 400'000;
inline constexpr double kMaxMemoryBytes = 512.0 * (1 << 20);
// Plan completions screen at most this many plans (a few seconds under ASan), beyond it the plan is refused.
inline constexpr long long kMaxCompletionPlans = 20'000;

}  // namespace podsim::fuzz
