// podsim sweep: a what-if grid, one row per point with the best plan found for it.
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "cli/commands.hpp"
#include "hardware/catalog.hpp"
#include "planner/goodput.hpp"
#include "hardware/input_error.hpp"
#include "hardware/json_reader.hpp"
#include "reports/sweep_report.hpp"
#include "planner/parallel.hpp"
#include "reports/sweep_shards.hpp"

namespace podsim {

namespace {

// podsim sweep merge SHARD.json... [--csv FILE] [--json FILE]: the shards' rows in point order.
int sweep_merge(const CommonFlags& f) {
    if (f.positional.size() < 2) throw UsageError("sweep merge: expected the shard files (podsim sweep merge SHARD.json...)");
    if (f.values.count("--shard") || f.values.count("--deadline-days") || f.values.count("--budget-usd"))
        throw UsageError("sweep merge: takes only the shard files, --csv and --json");
    check_out(f.value("--csv"));
    check_out(f.value("--json"));
    const std::vector<std::string> files(f.positional.begin() + 1, f.positional.end());
    std::vector<Json> shards;
    for (const auto& file : files) shards.push_back(load_json_file(file));
    const MergedSweep m = merge_sweep_shards(files, shards);
    if (f.value("--csv").empty() && f.value("--json").empty()) std::cout << m.csv;
    if (!f.value("--csv").empty()) emit(m.csv, f.value("--csv"));
    if (!f.value("--json").empty()) emit(m.json, f.value("--json"));
    std::fprintf(stderr, "sweep merge: %zu points from %zu shards\n", m.points, m.shards);
    return 0;
}

std::string file_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

int cmd_sweep(const Args& args) {
    const CommonFlags f = parse_flags(args, "sweep", {"--csv", "--json", "--deadline-days", "--budget-usd", "--shard", "--jobs"},
                                      {"--no-progress"});
    if (!f.positional.empty() && f.positional[0] == "merge") {
        if (!f.out.empty() || f.format != "text") throw UsageError("sweep merge: use --csv FILE and/or --json FILE");
        return sweep_merge(f);
    }
    if (f.positional.size() != 1) throw UsageError("sweep: expected one SWEEP.json (see podsim sweep --help)");
    if (!f.out.empty() || f.format != "text")
        throw UsageError("sweep: use --csv FILE and/or --json FILE (without them the CSV goes to stdout)");
    const SimBudget budget = budget_flags(f, "sweep");
    SweepAdvice advice;
    if (f.values.count("--deadline-days")) advice.deadline_days = number_flag(f, "sweep", "--deadline-days", 0, 1e-6, 36'525);
    if (f.values.count("--budget-usd")) advice.budget_usd = usd_flag(f, "sweep", "--budget-usd");
    check_out(f.value("--csv"));  // before the points run, so a bad path fails at once
    check_out(f.value("--json"));
    const Catalog cat = Catalog::load(default_catalog_dir());
    const Sweep sw = load_sweep(f.positional[0], cat);
    const ReliabilityInputs rel = load_reliability(default_catalog_dir());
    std::optional<ShardSpec> shard;
    if (f.values.count("--shard")) {
        try {
            shard = parse_shard(f.value("--shard"));
        } catch (const std::invalid_argument& e) {
            throw UsageError(std::string("sweep: --shard: ") + e.what());
        }
        // A shard's rows are only useful to sweep merge: its own file, in the shard format.
        if (f.value("--json").empty() || !f.value("--csv").empty())
            throw UsageError("sweep: --shard K/N writes the shard's rows with --json FILE (then: podsim sweep merge)");
    }
    const bool bar = !f.switches.count("--no-progress") && isatty(STDERR_FILENO);
    std::vector<size_t> indices;
    for (size_t i = 0; i < sw.points.size(); ++i)
        if (!shard || in_shard(*shard, i)) indices.push_back(i);
    // Points on --jobs threads (each point's search on one), each row in its slot: the same rows for any count.
    std::vector<SweepRow> rows(indices.size());
    std::atomic<size_t> finished{0};
    std::mutex print;
    parallel_for(indices.size(), jobs_flag(f, "sweep"), [&](size_t k, int) {
        rows[k] = run_sweep_point(sw.points[indices[k]], sw.objective, cat, rel, budget, advice);
        const size_t n = ++finished;
        if (bar) {
            std::lock_guard<std::mutex> lock(print);
            std::fprintf(stderr, "\r  point %zu / %zu", n, indices.size()), std::fflush(stderr);
        }
    });
    if (bar) std::fprintf(stderr, "\n");
    if (shard) {
        emit(sweep_shard_json(sw, file_bytes(f.positional[0]), *shard, indices, rows).dump(2) + "\n", f.value("--json"));
        return 0;
    }
    const std::string csv = sweep_csv(sw, rows);
    if (f.value("--csv").empty() && f.value("--json").empty()) std::cout << csv;
    if (!f.value("--csv").empty()) emit(csv, f.value("--csv"));
    if (!f.value("--json").empty()) emit(sweep_json(sw, rows).dump(2) + "\n", f.value("--json"));
    return 0;
}

}  // namespace podsim
