#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/commands.hpp"

namespace podsim {

CommonFlags parse_flags(const Args& args, const std::string& cmd, std::initializer_list<const char*> valued,
                        std::initializer_list<const char*> switches) {
    CommonFlags f;
    const std::set<std::string> own_valued(valued.begin(), valued.end()), own_switches(switches.begin(), switches.end());
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= args.size()) throw UsageError(cmd + ": " + a + " needs a value");
            return args[++i];
        };
        if (a == "--format") {
            f.format = value();
            if (f.format != "text" && f.format != "json")
                throw UsageError(cmd + ": --format expects text or json, got \"" + f.format + "\"");
        } else if (a == "--out") {
            f.out = value();
        } else if (a == "--network") {
            f.network = value();
            if (f.network != "analytical" && f.network != "simgrid")
                throw UsageError(cmd + ": --network expects analytical or simgrid, got \"" + f.network + "\"");
        } else if (a == "--kernel-profile") {
            f.kernel_profile = value();
        } else if (own_valued.count(a)) {
            f.values[a] = value();
        } else if (own_switches.count(a)) {
            f.switches.insert(a);
        } else if (a.rfind("--", 0) == 0) {
            throw UsageError(cmd + ": unknown option " + a + " (see podsim " + cmd + " --help)");
        } else {
            f.positional.push_back(a);
        }
    }
    return f;
}

double number_flag(const CommonFlags& f, const std::string& cmd, const std::string& name, double otherwise, double min) {
    const std::string v = f.value(name);
    if (v.empty()) return otherwise;
    size_t used = 0;
    double x = 0;
    try {
        x = std::stod(v, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != v.size() || !(x >= min))
        throw UsageError(cmd + ": " + name + " expects a number >= " + fmt::format("{:g}", min) + ", got \"" + v + "\"");
    return x;
}

std::vector<double> number_list_flag(const CommonFlags& f, const std::string& cmd, const std::string& name,
                                     std::vector<double> otherwise, double min) {
    const std::string v = f.value(name);
    if (v.empty()) return otherwise;
    std::vector<double> out;
    size_t start = 0;
    while (start <= v.size()) {
        const size_t comma = v.find(',', start);
        CommonFlags one;
        one.values[name] = v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (one.values[name].empty()) throw UsageError(cmd + ": " + name + " expects a comma-separated list of numbers, got \"" + v + "\"");
        out.push_back(number_flag(one, cmd, name, 0, min));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return out;
}

PriceOption parse_price_option(const std::string& cmd, const std::string& v) {
    if (auto p = price_option_from_string(v)) return *p;
    throw UsageError(cmd + ": --price expects on-demand, spot, 1y or 3y, got \"" + v + "\"");
}

Objective parse_objective(const std::string& cmd, const std::string& v) {
    if (auto o = objective_from_string(v)) return *o;
    throw UsageError(cmd + ": --objective expects time, cost or mfu, got \"" + v + "\"");
}

std::function<void(size_t, size_t)> progress_bar(const CommonFlags& f) {
    if (f.switches.count("--no-progress") || !isatty(STDERR_FILENO)) return {};
    return [](size_t done, size_t total) {
        const int width = 40, filled = total ? static_cast<int>(width * done / total) : width;
        std::fprintf(stderr, "\r  [%s%s] %3d%%  %zu / %zu plans", std::string(filled, '#').c_str(),
                     std::string(width - filled, '.').c_str(), total ? static_cast<int>(100 * done / total) : 100,
                     done, total);
        if (done >= total) std::fprintf(stderr, "\n");
        std::fflush(stderr);
    };
}

void emit(const std::string& text, const std::string& out) {
    if (out.empty()) {
        std::cout << text;
        return;
    }
    const std::string tmp = out + ".tmp";
    {
        std::ofstream f(tmp);
        if (!f) throw UsageError("cannot write " + out);
        f << text;
        if (!f) throw UsageError("cannot write " + out);
    }
    std::filesystem::rename(tmp, out);
}

}  // namespace podsim
