// podsim list: what the simulator can model, from the registries beside each enum (collective algorithms, network
// level kinds, topologies, pipeline schedules, GEMM precisions, fp8 recipes), with the parameters that shape each.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "placement/placement.hpp"
#include "hardware/catalog.hpp"
#include "models/plan.hpp"
#include "models/software_stack.hpp"
#include "sim/collectives.hpp"

namespace podsim {

namespace {

struct Section {
    const char* key;    // the positional argument and the JSON key
    const char* title;  // text output
    const std::vector<ChoiceDoc>& docs;
};

std::vector<Section> sections() {
    static const std::vector<ChoiceDoc> stacks = software_stack_docs(load_software_stacks(default_catalog_dir()));
    return {{"algorithms", "collective algorithms (sim/collectives.hpp)", algorithm_docs()},
            {"levels", "network level kinds (placement/placement.hpp)", level_kind_docs()},
            {"topologies", "topologies (hardware/network_graph.cpp)", topology_docs()},
            {"schedules", "pipeline schedules (models/plan.hpp; a scenario's parallel.schedule)", schedule_docs()},
            {"precisions", "GEMM precisions (models/quantize_ops.hpp; a scenario's training.precision)", precision_docs()},
            {"fp8_recipes", "fp8 scaling recipes (a scenario's training.fp8_recipe)", fp8_recipe_docs()},
            {"stacks", "software stacks (hardware/catalog/software/; a scenario's training.framework)", stacks}};
}

// `text` in lines of at most `width` characters, the first after `first`, the rest indented to its length.
std::string wrapped(const std::string& first, const std::string& text, size_t width = 110) {
    std::string out = first, line_start_pad(first.size(), ' ');
    size_t col = first.size();
    size_t i = 0;
    while (i < text.size()) {
        size_t j = text.find(' ', i);
        if (j == std::string::npos) j = text.size();
        const std::string word = text.substr(i, j - i);
        if (col > first.size() && col + 1 + word.size() > width) out += "\n" + line_start_pad, col = first.size();
        else if (col > first.size()) out += ' ', ++col;
        out += word, col += word.size();
        i = j + 1;
    }
    return out + "\n";
}

}  // namespace

int cmd_list(const Args& args) {
    const CommonFlags f = parse_flags(args, "list");
    if (f.positional.size() > 1) throw UsageError("list: expected at most one section (see podsim list --help)");
    std::vector<Section> shown;
    for (const auto& s : sections())
        if (f.positional.empty() || f.positional[0] == s.key) shown.push_back(s);
    if (shown.empty())
        throw UsageError("list: unknown section \"" + f.positional[0] +
                         "\" (expected algorithms, levels, topologies, schedules, precisions, fp8_recipes or stacks)");
    std::string out;
    if (f.format == "json") {
        Json j = {{"schema_version", 1}};
        for (const auto& s : shown) {
            Json entries = Json::array();
            for (const auto& d : s.docs) {
                Json params = Json::array();
                for (const auto& p : d.params) params.push_back({{"name", p.name}, {"doc", p.doc}});
                entries.push_back({{"name", d.name}, {"summary", d.summary}, {"params", params}});
            }
            j[s.key] = entries;
        }
        out = j.dump(2) + "\n";
    } else {
        for (const auto& s : shown) {
            if (!out.empty()) out += "\n";
            out += fmt::format("{}:\n", s.title);
            for (const auto& d : s.docs) {
                out += wrapped(fmt::format("  {:<20} ", d.name), d.summary);
                for (const auto& p : d.params) out += wrapped(fmt::format("      {:<25} ", p.name), p.doc);
            }
        }
    }
    emit(out, f.out);
    return 0;
}

}  // namespace podsim
