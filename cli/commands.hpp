// The podsim subcommands. Each returns the process exit code; errors are thrown and reported once in main.
#pragma once
#include <functional>
#include <limits>
#include <initializer_list>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "hardware/input_error.hpp"
#include "hardware/price.hpp"
#include "models/step_parts.hpp"
#include "planner/search.hpp"

namespace podsim {

using Args = std::vector<std::string>;

int cmd_run(const Args& args);
int cmd_validate(const Args& args);
int cmd_fit(const Args& args);
int cmd_calibrate(const Args& args);
int cmd_profile(const Args& args);
int cmd_check(const Args& args);
int cmd_search(const Args& args);
int cmd_sweep(const Args& args);
int cmd_report(const Args& args);
int cmd_list(const Args& args);
int cmd_catalog(const Args& args);
int cmd_import(const Args& args);

// Shared by the commands: "--format text|json", "--out FILE".
struct CommonFlags {
    std::string format = "text";
    std::string out;
    std::string network = "analytical";
    std::string kernel_profile;  // a podsim calibrate profile of the plan's chip
    std::vector<std::string> positional;
    std::map<std::string, std::string> values;  // a command's own options that take a value
    std::set<std::string> switches;             // and those that do not
    std::string value(const std::string& name, const std::string& otherwise = "") const {
        auto it = values.find(name);
        return it == values.end() ? otherwise : it->second;
    }
};
// The shared options, plus a command's own: `valued` take a value, `switches` do not. Anything else is an error.
CommonFlags parse_flags(const Args& args, const std::string& cmd, std::initializer_list<const char*> valued = {},
                        std::initializer_list<const char*> switches = {});
// A command's numeric option: absent -> `otherwise`; not a finite number in [min, max] -> UsageError naming it.
// --budget-usd and the like: 5e6, 5M, $5M, 2.5B, 750k.
double usd_flag(const CommonFlags& f, const std::string& cmd, const std::string& name);
double number_flag(const CommonFlags& f, const std::string& cmd, const std::string& name, double otherwise, double min,
                   double max = std::numeric_limits<double>::infinity());
// The same for a whole number (counts: --top, --confirm, --refine).
int int_flag(const CommonFlags& f, const std::string& cmd, const std::string& name, int otherwise, int min, int max);
// --jobs N: threads for search, sweep and validate (default: the machine's cores; results do not depend on it).
int jobs_flag(const CommonFlags& f, const std::string& cmd);
// "a,b,c" -> numbers, each in [min, max] (at most 64 of them); an empty list is an error.
std::vector<double> number_list_flag(const CommonFlags& f, const std::string& cmd, const std::string& name,
                                     std::vector<double> otherwise, double min,
                                     double max = std::numeric_limits<double>::infinity());
// --max-tasks N and --max-memory MiB: what one simulation may use (defaults in hardware/limits.hpp).
SimBudget budget_flags(const CommonFlags& f, const std::string& cmd);
// --tp/--pp/--cp/--ep/--vpp/--zero/--micro-batch LIST, --precision/--recompute NAMES, --max-tp-domain nvlink: what
// the search may choose (each a comma list; values outside the model's space leave that dimension empty, said).
PlanConstraints constraint_flags(const CommonFlags& f, const std::string& cmd);
// A plan written as `search` prints it ("tp 8 pp 16 (vpp 2) dp 8 cp 1 sp mb 1 zero 1 rc selective bf16", or the
// short "tp8 pp16x2 dp8 sp mb1 z1 rc:selective bf16"; "key=value" also works): the fields it names, over `base`.
// dp defaults to what the chips leave; the split must use exactly `chips`. UsageError naming the bad word.
ParallelPlan parse_plan_text(const std::string& cmd, const std::string& text, const ParallelPlan& base, int chips);
#define PODSIM_CONSTRAINT_FLAGS "--tp", "--pp", "--cp", "--ep", "--vpp", "--zero", "--micro-batch", "--precision", \
                                "--recompute", "--max-tp-domain"
// "--price" and "--objective" values; UsageError naming the command otherwise.
PriceOption parse_price_option(const std::string& cmd, const std::string& v);
Objective parse_objective(const std::string& cmd, const std::string& v);
// A progress bar on stderr for long searches, when stderr is a terminal and --no-progress is not given; else none.
std::function<void(size_t, size_t)> progress_bar(const CommonFlags& f);
inline bool use_simgrid(const CommonFlags& f) { return f.network == "simgrid"; }
// Writes all of `text` to `out` (or stdout when empty); a file is written whole or not at all, and only onto a new
// path or a regular file (directories, devices, fifos, sockets and symbolic links are refused: UsageError).
void emit(const std::string& text, const std::string& out);
// The same refusals, before any work: commands call it on their output paths first, so a bad path fails at once.
void check_out(const std::string& out);

class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Runs `f`; a runtime error that is not bad input (a search that cannot be run as asked, e.g. --objective cost
// without prices) becomes a usage error naming the command. Bad input stays bad input.
template <class F>
auto as_usage_error(const std::string& cmd, F&& f) -> decltype(f()) {
    try {
        return f();
    } catch (const InputError&) {
        throw;
    } catch (const std::runtime_error& e) {
        throw UsageError(cmd + ": " + e.what());
    }
}

}  // namespace podsim
