// podsim benchmark: how long one plan of the Megatron 1T scenario takes to simulate, and how many plan evaluations
// per second the model sustains on one core. Prints figures; asserts nothing (speed is proven here, not in tests).
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "hardware/catalog.hpp"
#include "models/published_run.hpp"
#include "models/scenario.hpp"
#include "models/calibration/cpu_train_step.hpp"
#include "hardware/calibration/kernel_profile.hpp"
#include "models/calibration/loopback_dp.hpp"
#include "models/kernel_calibration.hpp"
#include "models/step.hpp"
#include "models/fast_step.hpp"
#include "models/plan_space.hpp"
#include "planner/allocator.hpp"
#include "planner/search.hpp"
#include "sim/network_backend.hpp"
#include "sim/nccl_reference.hpp"

using namespace podsim;

extern "C" void openblas_set_num_threads(int);
extern "C" int openblas_get_num_threads();
using Clock = std::chrono::steady_clock;

static double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// podsim run as a child with `args`, its output to /dev/null: whether it exited 0, its wall time and its largest
// resident set (the kernel's ru_maxrss of the child, which covers the children it waited for, and what the child
// held before exec: this process, so measure while it is small).
struct ChildRun {
    bool ok = false;
    double wall_s = 0, max_resident_mib = 0;
};
static ChildRun run_podsim(std::vector<std::string> args) {
    args.insert(args.begin(), PODSIM_BINARY);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const auto t0 = Clock::now();
    const pid_t pid = fork();
    if (pid == 0) {
        const int null = open("/dev/null", O_WRONLY);
        dup2(null, STDOUT_FILENO);
        execv(PODSIM_BINARY, argv.data());
        _exit(127);
    }
    int status = 0;
    rusage ru{};
    ChildRun r;
    if (pid < 0 || wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return r;
    r.wall_s = seconds_since(t0);
    r.max_resident_mib = ru.ru_maxrss / 1024.0;
    r.ok = true;
    return r;
}

// The CLI's start-up: `podsim list stacks` (loads the catalog's stacks, prints a table) run `runs` times; the median
// wall time and the largest resident set.
static void cli_startup(int runs) {
    std::vector<double> wall;
    double max_mib = 0;
    for (int i = 0; i < runs; ++i) {
        const ChildRun r = run_podsim({"list", "stacks"});
        if (!r.ok) {
            std::printf("cli start-up: podsim list stacks did not run\n");
            return;
        }
        wall.push_back(r.wall_s);
        max_mib = std::max(max_mib, r.max_resident_mib);
    }
    std::sort(wall.begin(), wall.end());
    std::printf("cli start-up (podsim list stacks, %d runs): median %.1f ms, max resident %.1f MiB (CUDA and SimGrid "
                "are modules loaded on first use)\n",
                runs, wall[wall.size() / 2] * 1e3, max_mib);
}

// `podsim run SCENARIO --network NETWORK` as users run it: the child's figures and the step time it reports.
struct CliRun {
    ChildRun child;
    double step_s = 0;
};
static CliRun cli_run(const std::string& path, const char* network) {
    const std::string out = "/tmp/podsim-bench-run.json";
    std::remove(out.c_str());
    CliRun r{run_podsim({"run", path, "--network", network, "--format", "json", "--out", out}), 0};
    if (r.child.ok) {
        std::ifstream in(out);
        r.step_s = Json::parse(in).at("step_time_s").get<double>();
    }
    return r;
}

static void cli_simgrid_run(const std::string& dir, const char* file) {
    const std::string path = dir + "/" + file;
    const CliRun sg = cli_run(path, "simgrid"), an = cli_run(path, "analytical");
    if (!sg.child.ok || !an.child.ok) {
        std::printf("simgrid run, %s: podsim run did not succeed\n", file);
        return;
    }
    std::printf("simgrid run, %s: %.2f s wall, max resident %.0f MiB; step %.4f s, analytical %.4f s (%+.2f%%)\n",
                file, sg.child.wall_s, sg.child.max_resident_mib, sg.step_s, an.step_s, 100 * (an.step_s / sg.step_s - 1));
}

// The SimGrid backend at the scale users plan (issue #16: each under 10 s and 2 GiB on the bench machine) and on the
// shipped MoE scenarios, whose all-to-alls the closed form prices from the busiest torus link. Run first, while this
// process is small: a child's peak resident set counts what it had before exec, which was this process.
// `podsim_bench simgrid-scale` runs only this.
static void simgrid_scale() {
    for (const char* name : {"llama3-405b-16384xh100.json", "dense-1t-8xv5p-12288.json"})
        cli_simgrid_run(PODSIM_BENCH_SCENARIO_DIR, name);
    for (const char* name : {"glam-1.2t-v4-2048.json", "switch-c-1.6t-v4-4096.json", "mixtral-8x22b-32xa3-mega.json",
                             "deepseek-v3-671b-2048xh800.json"})
        cli_simgrid_run(PODSIM_SCENARIO_DIR, name);
}

// The whole search of the 1T scenario on 1 and on 2 threads (--jobs 2): screening blocks and engine confirmations
// spread over them; each run a fraction of a second, so 11 of each, alternating, and their medians.
// `podsim_bench search-threads` runs only this.
static void search_threads(const Scenario& s, const Catalog& cat, const ReliabilityInputs& rel) {
    SearchOptions two;
    two.jobs = 2;
    std::vector<double> on1, on2, screen1, screen2, confirm1, confirm2;
    bool same = true;
    for (int rep = 0; rep < 11; ++rep) {
        auto t3 = Clock::now();
        const SearchResult s2 = search_plans(s, cat, rel, two);
        on2.push_back(seconds_since(t3));
        t3 = Clock::now();
        const SearchResult s1 = search_plans(s, cat, rel, SearchOptions{});
        on1.push_back(seconds_since(t3));
        screen1.push_back(s1.screen_s), screen2.push_back(s2.screen_s);
        confirm1.push_back(s1.confirm_s), confirm2.push_back(s2.confirm_s);
        same = same && s1.ranked.size() == s2.ranked.size() &&
               std::equal(s1.ranked.begin(), s1.ranked.end(), s2.ranked.begin(), [](const auto& a, const auto& b) {
                   return describe_plan(a.plan) == describe_plan(b.plan) && a.step.step_time_s == b.step.step_time_s;
               });
    }
    auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    std::printf("podsim search megatron-1t on 2 threads (median of 11 each): %.3f s vs %.3f s on 1 = %.2fx speed-up "
                "(screening %.3f vs %.3f s, confirmation %.3f vs %.3f s); ranking %s\n",
                median(on2), median(on1), median(on1) / median(on2), median(screen2), median(screen1),
                median(confirm2), median(confirm1), same ? "identical" : "DIFFERENT");
}

int main(int argc, char** argv) {
    keep_freed_memory();
    if (argc > 1 && std::string(argv[1]) == "search-threads") {
        const Catalog cat = Catalog::load(default_catalog_dir());
        search_threads(load_scenario(std::string(PODSIM_SCENARIO_DIR) + "/megatron-1t-3072xa100.json", cat), cat,
                       load_reliability(default_catalog_dir()));
        return 0;
    }
    if (argc > 1 && std::string(argv[1]) == "simgrid-scale") {
        simgrid_scale();
        return 0;
    }
    cli_startup(11);
    simgrid_scale();
    auto t_load = Clock::now();
    const Catalog cat = Catalog::load(default_catalog_dir());
    const Scenario s = load_scenario(std::string(PODSIM_SCENARIO_DIR) + "/megatron-1t-3072xa100.json", cat);
    const double load_s = seconds_since(t_load);

    // 1. One run of the Megatron 1T scenario: 64 stages x 512 micro-batches through the event engine.
    std::vector<double> times;
    StepResult r;
    for (int i = 0; i < 7; ++i) {
        auto t0 = Clock::now();
        r = simulate_step(s.model, s.system, s.plan);
        times.push_back(seconds_since(t0));
    }
    std::sort(times.begin(), times.end());
    std::printf("megatron-1t run: catalog+scenario load %.1f ms; simulate_step median %.1f ms (min %.1f, max %.1f) over "
                "%zu runs; %zu tasks, %zu events; step %.2f s\n",
                load_s * 1e3, times[times.size() / 2] * 1e3, times.front() * 1e3, times.back() * 1e3, times.size(),
                r.simulated_tasks, r.sim.events, r.step_time_s);

    // 2. Plan evaluations per second: every (tp, pp, micro-batch, vpp) split of the 1T model on 3072 A100s.
    std::vector<ParallelPlan> plans;
    for (int tp : {1, 2, 4, 8})
        for (int pp : {8, 16, 32, 64, 128})
            for (int mb : {1, 2, 4})
                for (int vpp : {1, 2}) {
                    if (3072 % (tp * pp) != 0 || s.model.layers % (pp * vpp) != 0) continue;
                    ParallelPlan p = s.plan;
                    p.tp = tp, p.pp = pp, p.dp = 3072 / (tp * pp), p.micro_batch = mb, p.vpp = vpp;
                    p.schedule = vpp > 1 ? Schedule::interleaved : Schedule::one_f_one_b;
                    if (p.global_batch % (p.dp * mb) != 0) continue;
                    plans.push_back(p);
                }
    size_t evaluated = 0, feasible = 0;
    auto t0 = Clock::now();
    while (seconds_since(t0) < 3.0) {
        for (const auto& p : plans) {
            feasible += simulate_step(s.model, s.system, p).feasible;
            ++evaluated;
        }
    }
    const double el = seconds_since(t0);
    std::printf("plan evaluations: %zu in %.2f s = %.1f plans/s on one core (%zu distinct splits of the 1T model, %zu "
                "feasible per sweep; infeasible plans stop before the engine)\n",
                evaluated, el, evaluated / el, plans.size(), feasible * plans.size() / evaluated);

    // 3. The planner's screening (podsim search): the whole plan space of the 1T model on 3072 A100s through the
    //    closed-form step, on one core, with a fresh estimator each pass (its caches filled as it goes).
    {
        const PlanSpace space = default_plan_space(s.model, s.system, s.plan);
        size_t plans = 0, feasible = 0, passes = 0;
        auto t1 = Clock::now();
        while (seconds_since(t1) < 3.0) {
            StepEstimator est(s.model, s.system);
            for_each_plan(s.system, s.plan, space, [&](const ParallelPlan& p) {
                feasible += est.estimate(p).feasible();
                ++plans;
            });
            ++passes;
        }
        const double el1 = seconds_since(t1);
        std::printf("search screening: %zu plans in %.2f s = %.0f plans/s on one core (%zu passes over the %zu-plan space "
                    "of the 1T model, %zu fit per pass; the rest stop at the memory check)\n",
                    plans, el1, plans / el1, passes, plans / passes, feasible / passes);
        // Only the plans that fit: each is fully estimated (per-stage costs, schedule, gradient sync, optimizer).
        std::vector<ParallelPlan> fit;
        {
            StepEstimator est(s.model, s.system);
            for_each_plan(s.system, s.plan, space, [&](const ParallelPlan& p) {
                if (est.estimate(p).feasible()) fit.push_back(p);
            });
        }
        size_t n = 0;
        passes = 0;
        t1 = Clock::now();
        while (seconds_since(t1) < 3.0) {
            StepEstimator est(s.model, s.system);
            for (const auto& p : fit) n += est.estimate(p).step_time_s > 0;
            ++passes;
        }
        const double el2 = seconds_since(t1);
        std::printf("search screening, fitting plans only: %.0f plans/s (fresh estimator per pass of %zu plans; the "
                    "event engine: %.0f plans/s)\n",
                    n / el2, fit.size(), evaluated / el);
        // The whole search as the CLI runs it (screen, engine re-simulation of the best 40).
        const ReliabilityInputs rel = load_reliability(default_catalog_dir());
        auto t2 = Clock::now();
        const SearchResult sr = search_plans(s, cat, rel, SearchOptions{});
        std::printf("podsim search megatron-1t: %zu plans, %zu fit, screening %.3f s, engine confirmation of %zu plans "
                    "%.3f s, total %.3f s; best %s: %.2f s/step, MFU %.1f%%\n",
                    sr.plans, sr.feasible, sr.screen_s, sr.ranked.size(), sr.confirm_s, seconds_since(t2),
                    describe_plan(sr.ranked.front().plan).c_str(), sr.ranked.front().step.step_time_s,
                    100 * sr.ranked.front().step.mfu);
        search_threads(s, cat, rel);
    }

    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    std::printf("peak resident memory (analytical runs): %.1f MiB\n", ru.ru_maxrss / 1024.0);

    // 3. Whole training steps through the SimGrid backend: every instance of every collective of the plan lowered
    //    to flows on the full topology graph and simulated together (results cached per distinct collective).
    auto simgrid_step = [&](const char* label, const ModelSpec& m, const SystemSpec& sys, const ParallelPlan& p) {
        auto t0 = Clock::now();
        CollectiveTimer timer(sys, NetworkBackend::simgrid);
        StepOptions opt;
        opt.timer = &timer;
        opt.skip_engine_if_infeasible = false;
        StepResult sr = simulate_step(m, sys, p, opt);
        const double wall = seconds_since(t0);
        rusage self{}, kids{};
        getrusage(RUSAGE_SELF, &self);
        getrusage(RUSAGE_CHILDREN, &kids);
        std::printf("simgrid step, %s (%d chips): %.1f s wall, %zu flow simulations, step %.2f s (analytical %.2f s), "
                    "peak memory %.0f MiB (largest SimGrid child %.0f MiB)\n",
                    label, sys.chips, wall, timer.simulations(), sr.step_time_s,
                    simulate_step(m, sys, p, StepOptions{}).step_time_s, self.ru_maxrss / 1024.0, kids.ru_maxrss / 1024.0);
    };
    // 4. Predicted NCCL bus bandwidth against every published nccl-tests result in the catalog
    //    (hardware/catalog/collectives/nccl_tests.json): the same collective, buffer and GPUs, closed form and
    //    SimGrid, with the algorithm podsim chose (NCCL's by its own tuner) and the error.
    for (const auto& ref : load_nccl_references(default_nccl_reference_file(), cat)) {
        const NcclCheck a = check_nccl(ref, cat, NetworkBackend::analytical);
        const NcclCheck sg = check_nccl(ref, cat, NetworkBackend::simgrid);
        std::printf("nccl %s %.3g GB on %d GPUs (%s x %d): published busbw %.0f GB/s%s; predicted %s %.0f GB/s "
                    "(%+.1f%%), SimGrid %.0f GB/s (%+.1f%%)\n",
                    ref.collective.c_str(), ref.bytes / 1e9, ref.gpus, ref.system.c_str(), ref.nodes,
                    ref.busbw_bytes_per_s / 1e9, ref.algorithm.empty() ? "" : (" (" + ref.algorithm + ")").c_str(),
                    a.predicted_algorithm.c_str(), a.predicted_busbw_bytes_per_s / 1e9, 100 * a.error(),
                    sg.predicted_busbw_bytes_per_s / 1e9, 100 * sg.error());
    }
    simgrid_step("Megatron 1T on 3072 A100", s.model, s.system, s.plan);
    for (const auto& run : load_published_runs(std::string(PODSIM_SHARED_DIR) + "/validation/published_runs.json", cat))
        if (run.id == "palm-540b") simgrid_step("PaLM 540B on 6144 TPU v4", run.model, run.system, run.plan);

    // 5. Closing the calibration loop on this CPU: a real C++ training step (forward, backward, AdamW) against
    //    podsim's simulation of it from a calibration profile made just before, for three shapes; then two processes
    //    on loopback with a real gradient all-reduce.
    auto fresh_profile = [&](const calib::TinyGpt& t, const std::string& file) {
        std::string table;
        const Json ms = calibrate_kernels(cpu_gpt_model(t), cpu_gpt_plan(t, 1), 10.0, table);
        std::ofstream(file) << Json{{"schema_version", 1}, {"kind", "kernel-calibration"}, {"chip", "host-cpu"},
                                    {"device", {{"name", "this host"}}}, {"measurements", ms}}.dump();
        return calib::load_kernel_profile(file);
    };
    const calib::TinyGpt shapes[] = {{4, 512, 8, 2048, 8192, 512, 2, 2}, {4, 768, 12, 3072, 8192, 512, 1, 2},
                                     {4, 1024, 16, 4096, 8192, 256, 2, 2}};
    const SystemSpec host1 = cat.gpu_system("host-cpu", 1, "bench", "$");
    for (const auto& t : shapes) {
        const auto profile = fresh_profile(t, "/tmp/podsim-bench-cpu-profile.json");
        StepOptions opt;
        opt.kernels = &profile;
        const double pred = simulate_step(cpu_gpt_model(t), host1, cpu_gpt_plan(t, 1), opt).step_time_s;
        const double meas = calib::measure_train_step_s(t, 3);
        std::printf("cpu training step, %d layers, hidden %d, seq %d, %d x %d sequences: predicted %.3f s, measured "
                    "%.3f s (%+.1f%%)\n",
                    t.layers, t.hidden, t.seq, t.micro_batches, t.micro_batch, pred, meas, 100 * (pred / meas - 1));
    }
    {
        const calib::TinyGpt t{4, 512, 8, 2048, 8192, 256, 2, 2};
        const auto link = calib::measure_loopback();
        const int threads = openblas_get_num_threads();
        openblas_set_num_threads(1);
        const auto profile = fresh_profile(t, "/tmp/podsim-bench-cpu1-profile.json");
        openblas_set_num_threads(threads);
        const auto dp = calib::measure_dp_step(t, 3);
        SystemSpec host2 = cat.gpu_system("host-cpu", 2, "bench", "$");
        host2.node.gpu_nic_bytes_per_s = link.bytes_per_s;
        host2.node.network_latency_s = link.latency_s;
        StepOptions opt;
        opt.kernels = &profile;
        const auto r = simulate_step(cpu_gpt_model(t), host2, cpu_gpt_plan(t, 2), opt);
        std::printf("loopback data parallel, 2 processes: link %.2f GB/s each way, %.1f us; predicted %.3f s "
                    "(exposed communication %.3f s), measured %.3f s (all-reduce %.3f s), %+.1f%%\n",
                    link.bytes_per_s / 1e9, link.latency_s * 1e6, r.step_time_s, r.breakdown.exposed_comm_s, dp.step_s,
                    dp.allreduce_s, 100 * (r.step_time_s / dp.step_s - 1));
    }
    return 0;
}
