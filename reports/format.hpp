// Number formatting shared by the reports: durations and dollars as a reader wants them.
#pragma once
#include <string>

#include <fmt/format.h>

namespace podsim {

inline std::string duration(double s) {
    if (s >= 86400) return fmt::format("{:.1f} days", s / 86400);
    if (s >= 3600) return fmt::format("{:.1f} h", s / 3600);
    if (s >= 60) return fmt::format("{:.1f} min", s / 60);
    return fmt::format("{:.3f} s", s);
}

inline std::string money(double usd) {
    if (usd >= 1e6) return fmt::format("${:.2f}M", usd / 1e6);
    if (usd >= 1e3) return fmt::format("${:.1f}k", usd / 1e3);
    return fmt::format("${:.2f}", usd);
}

}  // namespace podsim
