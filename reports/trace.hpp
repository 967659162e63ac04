// One simulated training step as a Chrome / Perfetto trace (JSON trace-event format): a process per pipeline
// stage, a thread per stream (compute, sends, gradient sync), one complete event per task.
#pragma once
#include <nlohmann/json.hpp>

#include "models/step.hpp"

namespace podsim {

// `r` must come from simulate_step with record_timeline.
nlohmann::json perfetto_trace(const StepResult& r, const std::string& title);

}  // namespace podsim
