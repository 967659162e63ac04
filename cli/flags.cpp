#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "planner/parallel.hpp"
#include "sim/flows.hpp"
#include "reports/atomic_write.hpp"

namespace podsim {

CommonFlags parse_flags(const Args& args, const std::string& cmd, std::initializer_list<const char*> valued,
                        std::initializer_list<const char*> switches) {
    CommonFlags f;
    std::set<std::string> own_valued(valued.begin(), valued.end());
    const std::set<std::string> own_switches(switches.begin(), switches.end());
    // Every command that simulates plans it is given or searches has a budget (budget_flags); calibrate runs
    // kernels, fit simulates published runs with the default budget, and list simulates nothing.
    if (cmd != "calibrate" && cmd != "fit" && cmd != "list") own_valued.insert({"--max-tasks", "--max-memory"});
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
        } else if ((a == "--network" || a == "--kernel-profile") && !(cmd == "run" || (cmd == "profile" && a == "--kernel-profile") ||
                                                                        (cmd == "validate" && a == "--network"))) {
            // Accepted only where it changes the result: a flag that is read and then ignored would be a silent
            // default (issue #14).
            const std::string why =
                a == "--network"
                    ? (cmd == "search"
                           ? "plans are screened by the closed form and confirmed on the analytical engine; --refine K "
                             "re-times the best K on SimGrid"
                           : "it simulates on the analytical engine only; time one plan on SimGrid with podsim run "
                             "--network simgrid")
                    : "measured kernel profiles apply to podsim run only";
            throw UsageError(cmd + ": " + a + " does not apply here: " + why);
        } else if (a == "--network") {
            f.network = value();
            if (f.network != "analytical" && f.network != "simgrid")
                throw UsageError(cmd + ": --network expects analytical or simgrid, got \"" + f.network + "\"");
            std::string why;
            if (f.network == "simgrid" && !simgrid_backend_available(&why))
                throw UsageError(cmd + ": --network simgrid: " + why);
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
    // A bad --out FILE fails now, not after the work (report's --out is a directory: cmd_report checks it).
    if (cmd != "report") check_out(f.out);
    return f;
}

namespace {
// The number `v` spells in full ("12", "2.5e6"), NaN for anything else ("", "12x", "fast").
double whole_number_text(const std::string& v) {
    size_t used = 0;
    try {
        const double x = std::stod(v, &used);
        if (used == v.size()) return x;
    } catch (const std::exception&) {
    }
    return std::nan("");
}
}  // namespace

double number_flag(const CommonFlags& f, const std::string& cmd, const std::string& name, double otherwise, double min,
                   double max) {
    const std::string v = f.value(name);
    if (v.empty()) return otherwise;
    const double x = whole_number_text(v);
    if (!std::isfinite(x) || !(x >= min) || !(x <= max)) {
        const std::string range = std::isfinite(max) ? fmt::format("from {:g} to {:g}", min, max)
                                                     : fmt::format(">= {:g}", min);
        throw UsageError(cmd + ": " + name + " expects a number " + range + ", got \"" + v + "\"");
    }
    return x;
}

double usd_flag(const CommonFlags& f, const std::string& cmd, const std::string& name) {
    // Dollars as planners write them: 5000000, 5e6, 5M, $5M, 2.5B, 750k (k = 1e3, M = 1e6, B = 1e9).
    std::string v = f.value(name);
    const std::string given = v;
    if (!v.empty() && v.front() == '$') v.erase(0, 1);
    double scale = 1;
    if (!v.empty()) {
        const char last = v.back();
        if (last == 'k' || last == 'K') scale = 1e3, v.pop_back();
        else if (last == 'M' || last == 'm') scale = 1e6, v.pop_back();
        else if (last == 'B' || last == 'b' || last == 'G') scale = 1e9, v.pop_back();
    }
    const double x = whole_number_text(v) * scale;
    if (!std::isfinite(x) || !(x > 0) || !(x <= 1e13))
        throw UsageError(cmd + ": " + name + " expects dollars above 0 and up to 1e13 (5000000, 5e6, 5M, $5M, 2.5B, 750k), got \"" +
                         given + "\"");
    return x;
}

int int_flag(const CommonFlags& f, const std::string& cmd, const std::string& name, int otherwise, int min, int max) {
    const double x = number_flag(f, cmd, name, otherwise, min, max);
    if (x != std::floor(x))
        throw UsageError(cmd + ": " + name + " expects a whole number, got \"" + f.value(name) + "\"");
    return static_cast<int>(x);
}

SimBudget budget_flags(const CommonFlags& f, const std::string& cmd) {
    SimBudget b;
    b.max_tasks = static_cast<long long>(number_flag(f, cmd, "--max-tasks", double(b.max_tasks), 1000, double(1LL << 31)));
    b.max_memory_bytes = number_flag(f, cmd, "--max-memory", b.max_memory_bytes / double(1 << 20), 16, 1 << 24) *
                         double(1 << 20);
    return b;
}

std::vector<double> number_list_flag(const CommonFlags& f, const std::string& cmd, const std::string& name,
                                     std::vector<double> otherwise, double min, double max) {
    if (f.values.count(name) && f.value(name).empty())
        throw UsageError(cmd + ": " + name + " expects a comma-separated list of numbers, got \"\"");
    const std::string v = f.value(name);
    if (v.empty()) return otherwise;
    std::vector<double> out;
    size_t start = 0;
    while (start <= v.size()) {
        const size_t comma = v.find(',', start);
        CommonFlags one;
        one.values[name] = v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (one.values[name].empty() || out.size() >= 64) throw UsageError(cmd + ": " + name + " expects a comma-separated list of numbers, got \"" + v + "\"");
        out.push_back(number_flag(one, cmd, name, 0, min, max));
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
    // The phase, the plans screened, and the time left at the rate so far; when the screening ends, the phase that
    // follows (the event engine re-simulates the best plans), so that a pause there is not taken for a hang.
    struct State {
        std::chrono::steady_clock::time_point start;
        size_t last = 0;
    };
    auto st = std::make_shared<State>(State{std::chrono::steady_clock::now(), 0});
    return [st](size_t done, size_t total) {
        const auto now = std::chrono::steady_clock::now();
        if (done < st->last) st->start = now;  // a new search (report runs two)
        st->last = done;
        const double elapsed = std::chrono::duration<double>(now - st->start).count();
        const int width = 30, filled = total ? static_cast<int>(width * done / total) : width;
        std::string eta = "";
        if (done > 0 && done < total && elapsed > 0.5)
            eta = fmt::format(", about {:.0f} s left", elapsed * static_cast<double>(total - done) / static_cast<double>(done));
        std::fprintf(stderr, "\r  screening [%s%s] %3d%%  %zu / %zu plans%s      ", std::string(filled, '#').c_str(),
                     std::string(width - filled, '.').c_str(), total ? static_cast<int>(100 * done / total) : 100, done,
                     total, eta.c_str());
        if (done >= total)
            std::fprintf(stderr, "\n  screened in %.1f s; re-simulating the best plans on the event engine...\n", elapsed);
        std::fflush(stderr);
    };
}

void emit(const std::string& text, const std::string& out) {
    if (out.empty()) {
        std::cout << text;
        return;
    }
    // A temporary beside OUT renamed over it when whole; devices, directories and links refused (reports/atomic_write).
    try {
        write_file_atomically(out, text);
    } catch (const OutputError& e) {
        throw UsageError(e.what());
    }
}

void check_out(const std::string& out) {
    if (out.empty()) return;
    try {
        check_output_file(out);
    } catch (const OutputError& e) {
        throw UsageError(e.what());
    }
}

PlanConstraints constraint_flags(const CommonFlags& f, const std::string& cmd) {
    PlanConstraints c;
    auto ints = [&](const char* name, auto& out, double max) {
        if (!f.values.count(name)) return;
        for (double v : number_list_flag(f, cmd, name, {}, 0, max)) {
            if (v != std::floor(v)) throw UsageError(cmd + ": " + name + " takes whole numbers, got " + fmt::format("{:g}", v));
            out.push_back(static_cast<typename std::decay_t<decltype(out)>::value_type>(v));
        }
    };
    ints("--tp", c.tp, 1 << 20);
    ints("--pp", c.pp, 1 << 20);
    ints("--cp", c.cp, 1 << 20);
    ints("--ep", c.ep, 1 << 20);
    ints("--vpp", c.vpp, 1 << 10);
    ints("--zero", c.zero, 3);
    ints("--micro-batch", c.micro_batch, 1 << 20);
    auto names = [&](const char* name) {
        std::vector<std::string> out;
        std::string cur;
        for (char ch : f.value(name) + ",")
            if (ch == ',') {
                if (!cur.empty()) out.push_back(cur);
                cur.clear();
            } else {
                cur += ch;
            }
        if (f.values.count(name) && out.empty()) throw UsageError(cmd + ": " + name + " needs a comma list");
        return out;
    };
    for (const auto& n : names("--precision")) {
        bool ok = false;
        for (Precision p : {Precision::bf16, Precision::fp16, Precision::fp8, Precision::int8, Precision::fp4})
            if (n == to_string(p)) c.precision.push_back(p), ok = true;
        if (!ok) throw UsageError(cmd + ": --precision: unknown \"" + n + "\" (bf16, fp16, fp8, int8, fp4)");
    }
    for (const auto& n : names("--recompute")) {
        bool ok = false;
        for (Recompute r : {Recompute::none, Recompute::selective, Recompute::minimal, Recompute::full})
            if (n == to_string(r)) c.recompute.push_back(r), ok = true;
        if (!ok) throw UsageError(cmd + ": --recompute: unknown \"" + n + "\" (none, selective, minimal, full)");
    }
    if (f.values.count("--max-tp-domain")) {
        if (f.value("--max-tp-domain") != "nvlink")
            throw UsageError(cmd + ": --max-tp-domain takes \"nvlink\" (TP inside one NVLink domain)");
        c.tp_in_nvlink_domain = true;
    }
    return c;
}

ParallelPlan parse_plan_text(const std::string& cmd, const std::string& text, const ParallelPlan& base, int chips) {
    std::vector<std::string> words;
    std::string cur;
    for (char ch : text + " ") {
        if (ch == ' ' || ch == '(' || ch == ')' || ch == ',' || ch == '=' || ch == ':' || ch == '\t') {
            if (!cur.empty()) words.push_back(cur);
            cur.clear();
        } else {
            cur += ch;
        }
    }
    const std::string grammar = "(tp N, pp N[xV], vpp N, dp N, cp N, ep N, etp N, mb N, zero N, rc none|selective|minimal|"
                                "full, off N (layers offloaded to host memory), sp, a precision: bf16 fp16 fp8 int8 fp4)";
    auto fail = [&](const std::string& why) -> ParallelPlan {
        throw UsageError(cmd + ": --plan \"" + text + "\": " + why + " " + grammar);
    };
    ParallelPlan p = base;
    p.offload_layers = 0;  // as the text says: "off N", else none (not the scenario's completion)
    bool dp_given = false;
    auto number = [&](const std::string& key, const std::string& v, long long min = 1) -> long long {
        if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos || std::stoll(v) < min)
            fail(key + " needs a whole number >= " + std::to_string(min) + ", got \"" + v + "\";");
        return std::stoll(v);
    };
    static const char* const kKeys[] = {"vpp", "etp", "zero", "tp", "pp", "dp", "cp", "ep", "mb", "rc", "off", "z"};
    for (size_t i = 0; i < words.size(); ++i) {
        const std::string& w = words[i];
        if (w == "sp") { p.sp = true; continue; }
        if (w == "nosp") { p.sp = false; continue; }
        bool prec = false;
        for (Precision x : {Precision::bf16, Precision::fp16, Precision::fp8, Precision::int8, Precision::fp4})
            if (w == to_string(x)) p.precision = x, prec = true;
        if (prec) continue;
        std::string key, val;
        for (const char* k : kKeys)
            if (w.rfind(k, 0) == 0) { key = k, val = w.substr(key.size()); break; }
        if (key.empty()) fail("unknown word \"" + w + "\";");
        if (val.empty()) {
            if (i + 1 >= words.size()) fail(key + " needs a value;");
            val = words[++i];
        }
        if (key == "rc") {
            bool ok = false;
            for (Recompute r : {Recompute::none, Recompute::selective, Recompute::minimal, Recompute::full})
                if (val == to_string(r)) p.recompute = r, ok = true;
            if (!ok) fail("unknown recomputation \"" + val + "\";");
            continue;
        }
        if (key == "pp" && val.find('x') != std::string::npos) {  // the short form: pp16x2 is 16 stages, 2 chunks each
            p.vpp = static_cast<int>(number("vpp", val.substr(val.find('x') + 1)));
            val = val.substr(0, val.find('x'));
        }
        const long long n = number(key, val, key == "zero" || key == "z" || key == "off" ? 0 : 1);
        if (key == "off") p.offload_layers = static_cast<int>(n);
        else if (key == "tp") p.tp = static_cast<int>(n);
        else if (key == "pp") p.pp = static_cast<int>(n);
        else if (key == "vpp") p.vpp = static_cast<int>(n);
        else if (key == "dp") p.dp = static_cast<int>(n), dp_given = true;
        else if (key == "cp") p.cp = static_cast<int>(n);
        else if (key == "ep") p.ep = static_cast<int>(n);
        else if (key == "etp") p.etp = static_cast<int>(n);
        else if (key == "mb") p.micro_batch = n;
        else if (n > 3) fail("zero takes 0-3;");
        else p.zero = static_cast<int>(n);
    }
    const long long others = static_cast<long long>(p.tp) * p.pp * p.cp;
    if (!dp_given) {
        if (chips % others != 0) fail(fmt::format("tp x pp x cp = {} does not divide the {} chips;", others, chips));
        p.dp = static_cast<int>(chips / others);
    }
    if (others * p.dp != chips)
        fail(fmt::format("dp x tp x pp x cp = {} but the system has {} chips;", others * p.dp, chips));
    return p;
}

int jobs_flag(const CommonFlags& f, const std::string& cmd) {
    return int_flag(f, cmd, "--jobs", machine_cores(), 1, 1024);
}

}  // namespace podsim
