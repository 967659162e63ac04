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

// A path as a shared document shows it: inside podsim's tree from its top folder (hardware/catalog/reliability.json),
// anything else by its file name only, so that a report names no directory of the machine it was made on.
inline std::string shareable_path(const std::string& path) {
    for (const char* top : {"hardware/", "scenarios/", "tests/"}) {
        const auto at = path.rfind(std::string("/") + top);
        if (at != std::string::npos) return path.substr(at + 1);
        if (path.rfind(top, 0) == 0) return path;
    }
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Replaces every occurrence of `dir` (a directory) in `text` by nothing, for texts that embed paths.
inline std::string without_dir(std::string text, const std::string& dir) {
    if (dir.empty()) return text;
    for (auto at = text.find(dir); at != std::string::npos; at = text.find(dir, at)) text.erase(at, dir.size());
    return text;
}

// A large count as people write it: 300B, 15.6T, 1.2M (three significant digits).
inline std::string large_count(double n) {
    if (n >= 1e12) return fmt::format("{:.3g}T", n / 1e12);
    if (n >= 1e9) return fmt::format("{:.3g}B", n / 1e9);
    if (n >= 1e6) return fmt::format("{:.3g}M", n / 1e6);
    return fmt::format("{:.0f}", n);
}

// Dollars in one style everywhere (issue #14): $1.34M and $2.50B for large sums, whole dollars with thousands
// separators below a million ($3,312, $944), cents only below $100 ($12.40).
inline std::string money(double usd) {
    const double a = usd < 0 ? -usd : usd;
    const std::string sign = usd < 0 ? "-" : "";
    if (a >= 1e9) return sign + fmt::format("${:.2f}B", a / 1e9);
    if (a >= 1e6) return sign + fmt::format("${:.2f}M", a / 1e6);
    if (a >= 100) {
        std::string digits = fmt::format("{:.0f}", a);
        for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(static_cast<size_t>(i), ",");
        return sign + "$" + digits;
    }
    return sign + fmt::format("${:.2f}", a);
}

// A short wall-clock time: 3 ms, 0.42 s, 12.3 s (never "0.00 s").
inline std::string elapsed(double s) {
    if (s < 0.1) return fmt::format("{:.0f} ms", s * 1e3);
    if (s < 10) return fmt::format("{:.2f} s", s);
    return fmt::format("{:.1f} s", s);
}

}  // namespace podsim
