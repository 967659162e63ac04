// podsim import hf|maxtext|megatron: a model from where people keep it, written as a scenario with no plan (the
// plan is completed by search: podsim run / search / report take it as is).
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "hardware/catalog.hpp"
#include "hardware/limits.hpp"
#include "models/model_import.hpp"
#include "models/scenario.hpp"

namespace podsim {

namespace {

std::string read_text(const std::string& path) {
    if (!std::filesystem::is_regular_file(path)) throw InputError(path, "$", "expected a readable file");
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    if (!in && !in.eof()) throw InputError(path, "$", "could not be read");
    return ss.str();
}

// The scenario's defaults, each stated in its description: a batch of ~4M tokens (Llama 3 405B's first stage,
// Dubey et al. 2024 sec. 3.4.1), 20 tokens per parameter (Hoffmann et al. 2022), and, without --system, enough
// A3 Mega VMs (8 x H100 80GB) for ~18 bytes a parameter (bf16 weights and gradients, fp32 master and Adam moments,
// some activations) in 80% of HBM, rounded up to a power of two.
constexpr double kDefaultBatchTokens = 4194304, kTokensPerParam = 20, kBytesPerParam = 18;

}  // namespace

int cmd_import(const Args& all) {
    // Megatron-LM arguments come after "--", untouched by podsim's own flag parsing.
    Args args, extra;
    bool after = false;
    for (const auto& a : all) {
        if (!after && a == "--") after = true;
        else (after ? extra : args).push_back(a);
    }
    const CommonFlags f = parse_flags(args, "import",
                                      {"--seq-len", "--name", "--system", "--count", "--global-batch-seqs",
                                       "--token-budget"});
    if (f.positional.empty()) throw UsageError("import: expected hf CONFIG.json, maxtext MODEL.yml or megatron -- ARGS");
    const std::string kind = f.positional[0];
    if (f.out.empty()) throw UsageError("import: --out SCENARIO.json is required (the scenario it writes)");
    check_out(f.out);
    const long long seq = static_cast<long long>(number_flag(f, "import", "--seq-len", 4096, 1, double(limits::max_seq_len)));
    if (std::floor(seq) != seq) throw UsageError("import: --seq-len must be a whole number");
    ImportedModel im;
    std::string source;
    if (kind == "hf" || kind == "maxtext") {
        if (f.positional.size() != 2 || !extra.empty())
            throw UsageError("import " + kind + ": expected one " + (kind == "hf" ? "config.json" : "MODEL.yml"));
        source = f.positional[1];
        const std::string stem = std::filesystem::path(source).parent_path().filename().string();
        const std::string name = f.value("--name", kind == "hf" && !stem.empty() ? stem
                                                    : std::filesystem::path(source).stem().string());
        im = kind == "hf" ? import_hf_config(load_json_file(source), source, seq, name)
                          : import_maxtext_yaml(read_text(source), source, seq, name);
    } else if (kind == "megatron") {
        if (f.positional.size() != 1 || extra.empty())
            throw UsageError("import megatron: expected the model's arguments after --, e.g. import megatron --out s.json "
                             "-- --num-layers 32 --hidden-size 4096 ...");
        source = "Megatron-LM arguments";
        im = import_megatron_args(extra, f.value("--name", "imported Megatron-LM model"));
    } else {
        throw UsageError("import: unknown source \"" + kind + "\" (hf, maxtext or megatron)");
    }
    if (!f.values.count("--seq-len") && kind != "megatron")
        im.notes.push_back(fmt::format("seq_len {} is podsim's import default (--seq-len): a config gives the longest "
                                       "context it supports, not the length it was trained at", seq));

    // The model as podsim reads it: the same checks as a hand-written scenario's.
    const ModelSpec model = model_from_json(JsonObject(im.model, source + " (imported)", "$"));
    const double params = model.total_params();
    const Catalog cat = Catalog::load(default_catalog_dir());
    Json sc;
    sc["schema_version"] = 1;
    sc["name"] = model.name + " (imported)";
    std::vector<std::string> chosen;
    Json system;
    const std::string sys_name = f.value("--system");
    if (sys_name.empty()) {
        const double per_node = 8 * 80e9 * 0.8;
        long long nodes = 1;
        while (nodes * per_node < params * kBytesPerParam && nodes < limits::max_chips / 8) nodes *= 2;
        system["machine_type"] = "a3-megagpu-8g";
        system["nodes"] = nodes;
        chosen.push_back(fmt::format("system: {} x a3-megagpu-8g (8 x H100 80GB), sized for ~{} bytes a parameter in "
                                     "80% of HBM (--system/--count to choose)", nodes, kBytesPerParam));
    } else if (cat.find_node(sys_name)) {
        system["machine_type"] = sys_name;
        system["nodes"] = int_flag(f, "import", "--count", 1, 1, limits::max_chips);
    } else {
        system["accelerator_type"] = sys_name;  // checked below by the scenario loader, with nearest-name hints
        system["slices"] = int_flag(f, "import", "--count", 1, 1, limits::max_slices);
    }
    sc["system"] = system;
    const long long gbs = f.values.count("--global-batch-seqs")
                              ? static_cast<long long>(number_flag(f, "import", "--global-batch-seqs", 1, 1, 1e9))
                              : std::max<long long>(1, std::llround(kDefaultBatchTokens / seq));
    if (!f.values.count("--global-batch-seqs"))
        chosen.push_back(fmt::format("batch: {} sequences of {} (~4M tokens, as Llama 3 405B began)", gbs, seq));
    sc["batch"]["global_batch_seqs"] = gbs;
    const double tokens = f.values.count("--token-budget") ? number_flag(f, "import", "--token-budget", 1, 1, 1e18)
                                                           : std::round(kTokensPerParam * params);
    if (!f.values.count("--token-budget"))
        chosen.push_back(fmt::format("token budget: {:.3g} tokens (20 a parameter, Hoffmann et al. 2022)", tokens));
    sc["training"]["token_budget"] = tokens;
    sc["training"]["framework"] = system.contains("accelerator_type") ? "maxtext" : "megatron-core";
    sc["model"] = im.model;
    std::string desc = "Imported by podsim import " + kind + " from " + source + " (" + im.family +
                       "); no plan: podsim completes it by search.";
    for (const auto& c : chosen) desc += " Default " + c + ".";
    for (const auto& n : im.notes) desc += " Note: " + n + ".";
    sc["description"] = desc;
    // The written scenario must load as podsim loads scenarios (a system name it does not know fails here).
    const Scenario check = scenario_from_json(sc, f.out, cat);
    (void)check;
    emit(sc.dump(1) + "\n", f.out);

    std::string o = fmt::format("imported {} ({}) from {}\n  {:.4g}B parameters", model.name, im.family, source,
                                params / 1e9);
    if (model.moe.enabled()) o += fmt::format(", {:.4g}B active per token", model.active_params() / 1e9);
    o += fmt::format(" ({} layers, hidden {}, {} heads / {} KV, vocab {}, seq {})\n", model.layers, model.hidden,
                     model.heads, model.kv_heads, model.vocab, model.seq_len);
    for (const auto& c : chosen) o += "  default " + c + "\n";
    for (const auto& n : im.notes) o += "  note: " + n + "\n";
    o += "  wrote " + f.out + " (no plan: podsim run / search / report complete it)\n";
    std::cout << o;
    return 0;
}

}  // namespace podsim
