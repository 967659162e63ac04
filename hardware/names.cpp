#include "hardware/names.hpp"

#include <algorithm>
#include <numeric>

namespace podsim {

std::string normal_name(const std::string& name) {
    std::string out;
    out.reserve(name.size());
    for (unsigned char c : name)
        if (c != '-' && c != '_' && c != ' ' && c != '.') out.push_back(static_cast<char>(std::tolower(c)));
    return out;
}

int edit_distance(const std::string& a, const std::string& b) {
    std::vector<int> row(b.size() + 1);
    std::iota(row.begin(), row.end(), 0);
    for (size_t i = 1; i <= a.size(); ++i) {
        int diag = row[0];
        row[0] = static_cast<int>(i);
        for (size_t j = 1; j <= b.size(); ++j) {
            const int up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diag = up;
        }
    }
    return row[b.size()];
}

std::vector<std::string> nearest_names(const std::string& name, const std::vector<std::string>& known, int k) {
    const std::string q = normal_name(name);
    struct Scored {
        int distance;
        size_t order;
        std::string name;
    };
    std::vector<Scored> scored;
    for (size_t i = 0; i < known.size(); ++i) {
        const std::string n = normal_name(known[i]);
        if (n.empty()) continue;
        const int d = edit_distance(q, n);
        // Beyond half the longer name the "nearest" name shares too little to be a useful suggestion.
        const bool contains = !q.empty() && (n.find(q) != std::string::npos || q.find(n) != std::string::npos);
        if (!contains && 2 * d > static_cast<int>(std::max(q.size(), n.size()))) continue;
        // In half-edits: a name containing the query (or contained in it) ranks just ahead of one edit away.
        scored.push_back({contains ? 1 : 2 * d, i, known[i]});
    }
    std::stable_sort(scored.begin(), scored.end(), [](const Scored& a, const Scored& b) {
        return a.distance != b.distance ? a.distance < b.distance : a.order < b.order;
    });
    std::vector<std::string> out;
    for (const auto& s : scored) {
        if (static_cast<int>(out.size()) == k) break;
        if (std::find(out.begin(), out.end(), s.name) == out.end()) out.push_back(s.name);
    }
    return out;
}

std::string nearest_hint(const std::string& name, const std::vector<std::string>& known) {
    const auto near = nearest_names(name, known);
    if (near.empty()) return "";
    std::string out = "; nearest known: ";
    for (size_t i = 0; i < near.size(); ++i) out += (i ? ", " : "") + near[i];
    return out;
}

}  // namespace podsim
