// podsim: training-cluster simulator and cost planner. Dispatches subcommands; reports every error once, here.
#include <fmt/format.h>

#include <iostream>
#include <map>

#include "cli/commands.hpp"
#include "planner/allocator.hpp"
#include "hardware/input_error.hpp"

namespace {

const char* kUsage = R"(podsim - simulate and price large-model training on TPU pods and GPU clusters

usage: podsim <command> [options]

commands:
  run SCENARIO.json       simulate one plan: step time, breakdown, MFU/HFU, memory, time and dollars to train
  validate FILE.json...   predict published training runs and compare step times (MAPE, worst error)
  fit RUNS.json... --chip ID --precision 16bit|fp8 [--out PROFILE.json]
                          fit a chip's GEMM efficiency to half of the matching published runs
  calibrate SCENARIO.json --out PROFILE.json [--budget-s 60] [--device cpu] | [--from-trace TRACE.json]
                          run the plan's real kernels on this machine (or read a measured trace) and record
                          what they achieve
  profile record|compare  write the CPU training step as a Chrome trace; compare a measured trace with the step
  search SCENARIO.json    rank every parallel plan of the scenario's model by time, cost or MFU
  sweep SWEEP.json        what-if grid (chip type/count, model, batch, tokens, price, region): best plan per point
  report SCENARIO.json --out DIR [--trace]
                          Markdown + self-contained HTML report with SVG charts (and a Perfetto trace)
  check CLAIM.json        is a claimed outcome (parameters, days, utilization, tokens) physically plausible?
  list [SECTION]          the collective algorithms, network level kinds, topologies, pipeline schedules,
                          GEMM precisions and fp8 scaling recipes
  catalog [SECTION]       the chips, systems, prices and frameworks the catalog holds, with sources
  import hf|maxtext|megatron SOURCE --out SCENARIO.json
                          a model from a Hugging Face config, a MaxText YAML or Megatron-LM arguments
  help [command]          show help for a command
  --version               podsim's version (and the commit it was built from)

Each command accepts --help. Exit status: 0 success, 1 bad input, 2 usage error, 3 infeasible plan.

Output files (--out, --csv, --json) are written whole or not at all: into a temporary file beside the
target, renamed over it when complete. The target must be a new path or a regular file; directories,
devices, fifos, sockets and symbolic links are refused (exit 2; podsim does not write through links).
)";

const std::map<std::string, std::string> kHelp = {
    {"run", R"(usage: podsim run [SCENARIO.json] [--format text|json] [--out FILE] [--network analytical|simgrid]
                  [--kernel-profile PROFILE.json] [--stages]

Without SCENARIO.json, runs the built-in default: scenarios/seed-1.2t-v4-2048.json.

Reads a scenario (model, system, parallel plan, batch, training settings; see scenarios/*.json),
lowers it to the per-device task graph of one training step, runs the discrete-event engine and
prints the step time and its breakdown (compute, exposed communication, pipeline bubble,
optimizer), tokens/s, MFU and HFU, memory per device, time to train the token budget, chip-hours
and dollars under on-demand, spot and 1-/3-year commitment prices.

  --format text|json   output format (default text)
  --out FILE           write the output to FILE, whole or not at all, only when the command succeeds
                       (FILE must be new or a regular file: directories, devices and symbolic links are
                       refused; podsim does not write through links)
  --network analytical|simgrid
                       analytical (default): closed-form alpha-beta per topology and algorithm, no
                       contention; simgrid: every instance of each collective lowered to flows on the
                       topology graph and run together in SimGrid, so groups that share links contend
  --kernel-profile P   time ops from a `podsim calibrate` profile of the plan's chip (e.g. host-cpu):
                       each op from its measured kernel, else the profile's fitted model for its kind
  --stages             print the step's stages as JSON instead: one layer's op list with each op's
                       time, the priced step (per stage and model chunk: forward, backward, exposed
                       communication, gradient buckets; per stage: flush sync, optimizer, parameter
                       gather) and the size of the task graph the engine would run

Exit status 3 when the plan is impossible (TP not dividing heads, memory over HBM, ...): the
reasons are printed.
)"},
    {"validate", R"(usage: podsim validate FILE.json... [--format text|json] [--out FILE] [--detail ID] [--no-profiles] [--jobs N]
                       [--network analytical|simgrid]

Reads published training runs (format: ../shared/validation/README.md), predicts each run's
step time from its configuration alone, and prints id, published step time, predicted, error %,
then the mean absolute percentage error (MAPE) and the worst error. With --format json the keys
are runs[].id, runs[].predicted_step_time_s, mape_pct and max_error_pct.

  --detail ID     print the full plan report of one run (breakdown, networks, memory, per-op times)
  --no-profiles   ignore hardware/profiles/ and use the catalog's stated efficiencies only

A run whose stated recomputation does not fit podsim's memory model is simulated with the next
recomputation mode that fits (the run did fit, so it recomputed more); the note column says so.
)"},
    {"fit", R"(usage: podsim fit RUNS.json... --chip ID --precision 16bit|fp8 [--out PROFILE.json]

Derives one number, the chip's achieved GEMM efficiency for a precision class, from published
end-to-end training runs on that chip: alternate dense runs (in file order) are fitted, the others
are held out and their error printed (MoE runs stay out: their error is their routing's, not the GEMMs'). With --out, writes a profile for hardware/profiles/ that every
later plan on that chip and precision uses (and names in its output). Kernel calibration
(podsim calibrate, issue #4) will replace these with measured profiles.
)"},
    {"profile", R"(usage: podsim profile record SCENARIO.json --out TRACE.json [--steps 3]
       podsim profile compare SCENARIO.json TRACE.json [--format text|json] [--kernel-profile P] [--out FILE]

record runs the C++ CPU training step (models/calibration/cpu_train_step) of a host-cpu scenario's shape
(e.g. scenarios/cpu-host-gpt.json) and writes its steps as a Chrome trace: every region named as podsim
names its op (qkv, core.qk, mlp.down.wgrad, ...; embedding, head, loss, optimizer outside the layers), one
ProfilerStep#N annotation a step.

compare reads a Chrome trace-event file (PyTorch profiler / Kineto: its device kernels; the JAX profiler's
trace-viewer export; or record's), attributes its time to podsim's ops (events named as podsim's ops) and to
categories (GEMM, attention, elementwise, communication, memory, optimizer: from the kernel names otherwise),
and prints measured vs simulated per layer op (per layer and micro-batch) and per category per step, with
the share of measured time in named events and the largest unnamed ones.
)"},
    {"calibrate", R"(usage: podsim calibrate SCENARIO.json --out PROFILE.json [--budget-s 60] [--device cpu|cuda]
       podsim calibrate SCENARIO.json --from-trace TRACE.json --out PROFILE.json

Runs the real kernels of the plan's training step on this machine at the exact per-device shard
shapes (every GEMM of a layer's forward and backward, causal attention, norms, activations,
residual passes, logits and loss, AdamW). Each kernel is warmed up and repeated; the profile
records its shape, FLOPs, bytes, median/min/max time and spread, achieved FLOP/s and bytes/s, the
CPU and the BLAS build.

--budget-s (seconds, 1 to 86400; default 60) bounds the whole run: tiny first runs measure this
machine's speeds, each kernel's cost (allocating its operands, warm-up, repetitions) is estimated
before it runs, and its token dimension is shrunk and its repetitions cut (down to one after the
warm-up) to fit its share of the time left; a kernel that does not fit even at its smallest shape
is skipped, and the profile's "skipped" says why. A kernel's operands are kept within 2 GiB (wider
shapes are cut; the measurement's "note" says so). The run ends by printing the time taken against
the budget and, if it ran over, by how much and why; the profile records the same (elapsed_s,
overrun) with the largest kernel's memory and the process's peak memory.

--from-trace TRACE.json writes the profile from a measured Chrome trace of the scenario's step
instead (the trace must have run the scenario's model and plan: occurrences per step follow from
them). Events named as podsim's ops (podsim profile record, or annotated regions) give each op its
mean time per occurrence (the events' total over steps x micro-batches x layers); a trace of vendor
kernels only (Kineto: cuBLAS, flash, elementwise kernel names) gives one rate per kind instead: the
step's GEMM FLOPs over its GEMM time, attention FLOPs over attention time, elementwise bytes over
elementwise time. Ops the trace did not show keep the catalog's efficiency model ("unmeasured_ops").
Use the profile with --kernel-profile on run, search and profile compare.
GEMMs use OpenBLAS in fp32 (Debian's build has no bf16 GEMM). With --device cuda (a build that
found nvcc, on a machine with an NVIDIA GPU) the same ops run as cuBLAS bf16 GEMMs and CUDA
kernels, and the profile is for the scenario's chip.
)"},
    {"search", R"(usage: podsim search SCENARIO.json [--objective time|cost|mfu] [--top 10] [--refine K]
                     [--scales 0.5,1,2] [--price on-demand|spot|1y|3y] [--deadline-days D]
                     [--budget-usd X] [--confirm 40] [--no-profiles] [--no-progress] [--jobs N]
                     [--format text|json] [--out FILE]

Enumerates every plan for the scenario's model on its system: data / tensor / pipeline / context
parallel splits of the chips, virtual pipeline stages (Megatron's rule: they divide the layers
per stage), ZeRO 0-3 (2 and 3 without pipelining), sequence parallelism, micro-batches 1-32,
recomputation none/selective/minimal/full, the scenario's precision and fp8 where the chip has
it; the scenario fixes the global batch and the framework's overlap behaviour. Plans that do not
fit are counted by reason, with one example each. The rest are screened with podsim's closed-form
step (the engine's own priced step under the schedule's formula; within 1% of it, tests/test_one_step.cpp),
and the best --confirm are re-simulated with the event engine, whose figures are printed.

  --objective       time (tokens/s), cost ($ per token at --price) or mfu (default time)
  --top N           plans printed (default 10)
  --refine K        re-simulate the best K with the SimGrid network backend (links shared by all
                    group instances) and print both
  --scales LIST     also search the system scaled to these multiples of its chip count (GPU: nodes;
                    TPU: the slice of that size, else whole slices); the Pareto front of time to
                    train vs dollars spans them (default 1)
  --price OPTION    purchase option for dollars (default on-demand)
  --deadline-days D print the cheapest plan that trains the token budget within D days
  --budget-usd X    print the fastest plan that trains the token budget for at most X dollars
                    (both include failures and restarts: planner/goodput; a 1y/3y commitment
                    counts its whole term, used or not)
  --no-profiles     ignore hardware/profiles/ (stated efficiencies only)
  --no-progress     no progress bar (it is drawn on stderr when stderr is a terminal)

Constraints (also for podsim report): each keeps only the listed values of its dimension
  --tp/--pp/--cp/--ep/--vpp/--zero/--micro-batch LIST   e.g. --tp 1,2,4,8 --zero 1
  --precision LIST  bf16, fp16, fp8, int8, fp4 (without it fp8 is tried where the chip has it)
  --recompute LIST  none, selective, minimal, full
  --max-tp-domain nvlink   TP only inside one NVLink domain (GPU systems)

Exit status 3 when no plan fits (a constraint that leaves none says so).
)"},
    {"sweep", R"(usage: podsim sweep SWEEP.json [--csv FILE] [--json FILE] [--no-progress] [--jobs N]
                    [--deadline-days D] [--budget-usd X]
       podsim sweep SWEEP.json --shard K/N --json SHARD.json [...]
       podsim sweep merge SHARD.json... [--csv FILE] [--json FILE]

A what-if grid over a base scenario (see scenarios/sweeps/): every combination of the axes given,
each searched like podsim search (closed-form screening, engine confirmation) for its best plan
under the sweep's objective (time, cost or mfu). Axes (each a list; absent = the base's value):
  system             system objects as in a scenario: chip type and count / TPU slice shape
  chip_scale         multiples of the system's chip count (GPU nodes; TPU slice, else slices)
  model              model objects as in a scenario (model size)
  global_batch_seqs  sequences per step
  token_budget       tokens to train
  price_option       on-demand, spot, 1y, 3y
  region             pricing region
One row per point: the axis values, the system, plans searched and fitting, the best plan, step
time, MFU, tokens/s, memory, days (without and with failures) and dollars with failures at the
point's price. CSV to stdout unless --csv/--json name files (each written whole or not at all).
Every axis value is checked before any point runs; errors name the sweep file and JSON path.
Across machines: --shard K/N (0 <= K < N) runs the points i with i % N == K and writes them to a
shard file; sweep merge checks that the shards are all N of one sweep (same file contents, same
podsim output head; each point once) and writes the CSV/JSON the unsharded sweep writes, byte for
byte. deploy/ has a GKE Indexed Job and a Slurm array script that run a sweep this way.
)"},
    {"report", R"(usage: podsim report SCENARIO.json --out DIR [--trace [--plan best|scenario|PLAN]] [--objective time|cost|mfu]
                     [--price on-demand|spot|1y|3y] [--top 8] [--scales 0.25,0.5,1,2,4]
                     [--no-profiles] [--no-progress]

Writes DIR/report.md (charts as DIR/charts/*.svg) and DIR/report.html (one self-contained file,
charts inline, no network needed to view it): a summary of the scenario's plan and the best plan
found (step time, MFU, time to train, dollars, goodput), where the time goes (breakdown and one
step's timeline per device class: first, middle and last pipeline stage), the top strategies on
the scenario's system compared, time to train vs dollars with the Pareto front and a throughput
scaling curve over --scales of the chip count, cost and goodput per purchase option, the
provisioning commands (gcloud TPU queued resources or GPU VMs) and framework settings for the
best plan, and the assumptions with their sources.

  --trace    also write DIR/trace.json: one step as a Chrome/Perfetto trace (a process per
             pipeline stage; threads for compute, collectives, sends and gradient sync): every
             task, every transformer layer, each kernel and collective (bytes, group, algorithm,
             overlapped or blocking) of the first and last micro-batch, flow arrows between
             pipeline stages; open it in ui.perfetto.dev or chrome://tracing
  --plan     the plan the trace shows: best (the report's best plan, default), scenario, or a
             plan as search prints it, e.g. "tp 8 pp 8 (vpp 6) dp 16 sp mb 1 zero 1 rc selective
             bf16" or "tp8 pp8x6 dp16 sp mb1 z1 rc:selective bf16" (unnamed fields: the scenario's)

DIR is built whole in a temporary directory beside it and renamed into place at the end, so a
failure leaves nothing. DIR's parent must exist. An existing DIR is replaced only when it is empty
or holds nothing but a previous report (report.md, report.html, trace.json, charts/*.svg); any
other existing DIR, a file, or a symbolic link is refused (exit 2).
)"},
    {"check", R"(usage: podsim check CLAIM.json [--format text|json] [--out FILE]

Takes a claimed training outcome (params, training_days, hardware_utilization, tokens, cost_usd;
see scenarios/claims/) and the scenario it is about, searches every plan for that model on that
system (as podsim search) and judges the claim against the most favourable ones: the claimed
utilization against the highest hardware FLOPs utilization of any plan (beyond podsim's worst
published-run error counts as implausible), the tokens the fastest plan trains in the claimed days,
and the MFU that claimed tokens and days imply.
)"},
    {"catalog", R"(usage: podsim catalog [chips|systems|prices|frameworks] [--format json] [--out FILE]

Lists what the catalog (hardware/catalog/) holds, with the key figures and where each came from:
  chips       per-precision dense peaks (bf16, fp8, int8, fp4; '-' where the chip has none), HBM,
              power, names it is found by
  systems     GPU VMs and nodes (GPUs, NVLink domain, NVLS and SHARP, NICs, network, fabric) and
              TPU slice families (largest slice, chips per host, DCN)
  prices      per SKU and region: on-demand, spot, 1- and 3-year commitments, DWS flex-start; a
              price, "unknown" (offered, not published) or "not offered"; date
  frameworks  the software stacks a scenario's training.framework names
With --format json: {schema_version, chips, systems, prices, frameworks}; keys carry their units
(peak_bf16_flops_per_s, hbm_bytes, on_demand_usd, ...); null where a figure is not known.
)"},
    {"import", R"(usage: podsim import hf CONFIG.json --out SCENARIO.json [options]
       podsim import maxtext MODEL.yml --out SCENARIO.json [options]
       podsim import megatron --out SCENARIO.json [options] -- --num-layers 32 --hidden-size 4096 ...

Writes a scenario with the model read from a Hugging Face config.json (model_type llama, mistral,
mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, gemma, gemma2, gemma3, deepseek_v2, deepseek_v3), a
MaxText model YAML (src/maxtext/configs/models/*.yml) or Megatron-LM model arguments, a system and a
batch to edit, and no plan: podsim run / search / report complete the plan by search. Prints the
parameter count and what podsim does not model of the source (sliding windows, MTP modules, ...).
A scenario may also name the config itself: "model": {"from_hf": "config.json", "seq_len": 4096}.
Options:
  --seq-len N              training sequence length (default 4096; a config gives only its longest
                           context)
  --name TEXT              the model's name (default: the config's folder or file name)
  --system NAME            a GPU machine type (a3-megagpu-8g, a4-highgpu-8g, ...) or a TPU
                           accelerator type (v5p-1024, ...); default: A3 Mega VMs sized to the model
  --count N                nodes (GPU) or slices (TPU), default 1
  --global-batch-seqs N    default: ~4M tokens
  --token-budget N         default: 20 tokens a parameter
)"},
    {"list", R"(usage: podsim list [algorithms|levels|topologies|schedules|precisions|fp8_recipes|stacks]
                   [--format text|json] [--out FILE]

Prints what podsim models, each with one line on what it is and the parameters that shape it:
  algorithms   collective algorithms: what the closed form picks (ring family, flat ring, tree,
               all-to-all) and what the SimGrid lowering runs (pairwise, p2p); the "algorithm"
               column of a plan's networks names one
  levels       network level kinds a group's collective crosses (NVLink, scale-out NICs, ICI
               torus axes, DCN), with the catalog figures that set their bandwidth and latency
  topologies   the network graphs the SimGrid backend builds (TPU torus, GPU rail fat tree)
  schedules    pipeline schedules, as a scenario's "parallel.schedule" names them
  precisions   GEMM precisions, as a scenario's "training.precision" names them: which GEMMs
               run in which format, and the chip figures they need
  fp8_recipes  fp8 scaling recipes ("training.fp8_recipe"): the casts and amax reductions each adds
With a SECTION, only that one. With --format json: one array per section of {name, summary,
params: [{name, doc}]}.
)"},
};

bool wants_help(const std::vector<std::string>& a) {
    for (const auto& s : a)
        if (s == "--help" || s == "-h") return true;
    return false;
}

}  // namespace

int main(int argc, char** argv) {
    podsim::keep_freed_memory();
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) {
        std::cerr << kUsage;
        return 2;
    }
    const std::string cmd = args[0];
    args.erase(args.begin());
    if (cmd == "--version" || cmd == "version") {
        const std::string commit = PODSIM_GIT_COMMIT;
        std::cout << "podsim " << PODSIM_VERSION << (commit.empty() ? "" : " (" + commit + ")") << "\n";
        return 0;
    }
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
        if (!args.empty() && kHelp.count(args[0])) std::cout << kHelp.at(args[0]);
        else std::cout << kUsage;
        return 0;
    }
    try {
        if (!kHelp.count(cmd)) throw podsim::UsageError("unknown command \"" + cmd + "\" (try podsim --help)");
        if (wants_help(args)) {
            std::cout << kHelp.at(cmd);
            return 0;
        }
        if (cmd == "run") return podsim::cmd_run(args);
        if (cmd == "validate") return podsim::cmd_validate(args);
        if (cmd == "fit") return podsim::cmd_fit(args);
        if (cmd == "calibrate") return podsim::cmd_calibrate(args);
        if (cmd == "profile") return podsim::cmd_profile(args);
        if (cmd == "check") return podsim::cmd_check(args);
        if (cmd == "search") return podsim::cmd_search(args);
        if (cmd == "sweep") return podsim::cmd_sweep(args);
        if (cmd == "report") return podsim::cmd_report(args);
        if (cmd == "list") return podsim::cmd_list(args);
        if (cmd == "catalog") return podsim::cmd_catalog(args);
        if (cmd == "import") return podsim::cmd_import(args);
    } catch (const podsim::InputError& e) {
        std::cerr << "podsim: error: " << e.what() << "\n";
        return 1;
    } catch (const podsim::UsageError& e) {
        std::cerr << "podsim: " << e.what() << "\n";
        return 2;
    } catch (const std::bad_alloc&) {
        // Inputs are range-checked and simulations sized before they allocate (--max-tasks, --max-memory), so
        // running out of memory means the machine has less than those budgets assume.
        std::cerr << "podsim: out of memory (lower --max-memory / --max-tasks below what this machine has)\n";
        return 4;
    } catch (const std::exception& e) {
        std::cerr << "podsim: internal error: " << e.what() << "\n";
        return 4;
    }
    return 2;
}
