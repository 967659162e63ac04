#include "hardware/catalog.hpp"
#include "hardware/limits.hpp"
#include "hardware/names.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace podsim {

namespace fs = std::filesystem;

namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

std::vector<std::string> json_files(const std::string& dir) {
    std::vector<std::string> out;
    if (!fs::is_directory(dir)) throw InputError(dir, "$", "catalog directory not found");
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().extension() == ".json") out.push_back(e.path().string());
    std::sort(out.begin(), out.end());
    return out;
}

template <typename T>
const T* find_named(const std::vector<T>& items, const std::string& name) {
    const std::string key = normal_name(name);
    if (key.empty()) return nullptr;
    for (const auto& it : items) {
        if (normal_name(it.id) == key) return &it;
        for (const auto& a : it.aliases)
            if (normal_name(a) == key) return &it;
    }
    return nullptr;
}

// The ids of the items nearest to `name` by any of their names, as "; nearest known: ..." (or "").
template <typename T>
std::string nearest_ids(const std::vector<T>& items, const std::string& name) {
    std::vector<std::string> names, ids;
    for (const auto& it : items) {
        names.push_back(it.id), ids.push_back(it.id);
        for (const auto& a : it.aliases) names.push_back(a), ids.push_back(it.id);
    }
    std::vector<std::string> near;
    for (const auto& n : nearest_names(name, names, static_cast<int>(names.size()))) {
        const std::string& id = ids[static_cast<size_t>(std::find(names.begin(), names.end(), n) - names.begin())];
        if (std::find(near.begin(), near.end(), id) == near.end() && near.size() < 3) near.push_back(id);
    }
    return nearest_hint(name, near);
}

// Two catalog entries answering to one name would make lookups depend on file order: refuse at load.
template <typename T>
void check_unique_names(const std::vector<T>& items, const std::string& file, const T& added) {
    std::vector<std::string> mine{added.id};
    mine.insert(mine.end(), added.aliases.begin(), added.aliases.end());
    for (const auto& n : mine) {
        if (const T* other = find_named(items, n))
            throw InputError(file, "$.aliases", "the name \"" + n + "\" already names \"" + other->id +
                                                    "\" (names are compared ignoring case, '-', '_', ' ' and '.')");
    }
}

}  // namespace

std::string default_catalog_dir() {
    if (const char* env = std::getenv("PODSIM_CATALOG")) return env;
    return PODSIM_CATALOG_DIR;
}

Catalog Catalog::load(const std::string& dir) {
    Catalog c;
    for (const auto& f : json_files(dir + "/chips")) {
        Json j = load_json_file(f);
        ChipSpec chip = chip_from_json(JsonObject(j, f, "$"));
        check_unique_names(c.chips_, f, chip);
        c.chips_.push_back(chip);
    }
    for (const auto& f : json_files(dir + "/systems")) {
        Json j = load_json_file(f);
        NodeSpec n = node_from_json(JsonObject(j, f, "$"));
        if (!c.find_chip(n.chip))
            throw InputError(f, "$.chip", "unknown chip \"" + n.chip + "\"" + c.chip_hint(n.chip));
        check_unique_names(c.nodes_, f, n);
        c.nodes_.push_back(n);
    }
    const std::string profiles = dir + "/../profiles";
    if (fs::is_directory(profiles)) {
        for (const auto& f : json_files(profiles)) {
            Json j = load_json_file(f);
            std::string chip_id;
            EfficiencyProfile p = profile_from_json(JsonObject(j, f, "$"), &chip_id);
            auto it = std::find_if(c.chips_.begin(), c.chips_.end(), [&](const ChipSpec& x) { return x.id == chip_id; });
            if (it == c.chips_.end()) throw InputError(f, "$.chip", "unknown chip \"" + chip_id + "\"");
            p.fitted_chip = chip_id;
            it->profiles.push_back(p);
        }
    }
    // A part cut from another chip's die runs the same kernels at its own clocks and memory: that chip's fitted
    // fractions of peak apply to it, unless it has its own fit for the precision.
    for (auto& chip : c.chips_) {
        if (chip.silicon_of.empty()) continue;
        auto src = std::find_if(c.chips_.begin(), c.chips_.end(), [&](const ChipSpec& x) { return x.id == chip.silicon_of; });
        if (src == c.chips_.end() || src->id == chip.id || !src->silicon_of.empty())
            throw InputError(chip.file, "$.silicon_of",
                             "expected the id of another chip in the catalog that names no silicon_of itself, got \"" +
                                 chip.silicon_of + "\"");
        for (const EfficiencyProfile& p : src->profiles) {
            const bool own = std::any_of(chip.profiles.begin(), chip.profiles.end(),
                                         [&](const EfficiencyProfile& q) { return q.precision == p.precision; });
            if (own) continue;
            EfficiencyProfile shared = p;
            shared.method += "; fitted on " + src->id + ", the same silicon";
            chip.profiles.push_back(shared);
        }
    }
    if (fs::is_directory(dir + "/storage"))
        for (const auto& f : json_files(dir + "/storage")) {
            Json j = load_json_file(f);
            StorageSpec s = storage_from_json(JsonObject(j, f, "$"));
            if (c.find_storage(s.id)) throw InputError(f, "$.id", "storage \"" + s.id + "\" is defined twice");
            c.storage_.push_back(s);
        }
    for (const auto& f : json_files(dir + "/prices")) {
        Json j = load_json_file(f);
        auto ps = prices_from_json(JsonObject(j, f, "$"));
        c.prices_.insert(c.prices_.end(), ps.begin(), ps.end());
    }
    return c;
}

const ChipSpec* Catalog::find_chip(const std::string& name) const { return find_named(chips_, name); }
const NodeSpec* Catalog::find_node(const std::string& name) const { return find_named(nodes_, name); }
std::string Catalog::chip_hint(const std::string& name) const { return nearest_ids(chips_, name); }
std::string Catalog::node_hint(const std::string& name) const { return nearest_ids(nodes_, name); }

const StorageSpec* Catalog::find_storage(const std::string& id) const {
    for (const auto& s : storage_)
        if (s.id == id) return &s;
    return nullptr;
}

const PriceEntry* Catalog::price_for(const std::string& sku, const std::string& region) const {
    for (const auto& p : prices_)
        if (p.sku == sku && (region.empty() || p.region == region)) return &p;
    return nullptr;
}

SystemSpec Catalog::tpu_system(const std::string& accelerator_type, int slices, const std::string& file,
                               const std::string& path) const {
    auto dash = accelerator_type.rfind('-');
    if (dash == std::string::npos)
        throw InputError(file, path, "expected a TPU accelerator type like \"v4-2048\", got \"" + accelerator_type + "\"");
    const std::string prefix = lower(accelerator_type.substr(0, dash));
    const ChipSpec* chip = nullptr;
    std::vector<std::string> generations;
    for (const auto& c : chips_) {
        if (!c.tpu) continue;
        generations.push_back(c.tpu->type_prefix);
        if (normal_name(c.tpu->type_prefix) == normal_name(prefix)) chip = &c;
        for (const auto& a : c.aliases)
            if (normal_name(a) == normal_name(prefix)) chip = &c;  // "v5e-256" as well as "v5litepod-256"
    }
    if (!chip)
        throw InputError(file, path, "unknown TPU generation \"" + prefix + "\" in \"" + accelerator_type + "\"" +
                                         nearest_hint(prefix, generations));
    int count = 0;
    try {
        size_t used = 0;
        count = std::stoi(accelerator_type.substr(dash + 1), &used);
        if (used != accelerator_type.size() - dash - 1) throw std::invalid_argument("suffix");
    } catch (const std::exception&) {
        throw InputError(file, path, "expected a core/chip count after the dash in \"" + accelerator_type + "\"");
    }
    const auto& r = *chip->tpu;
    if (r.type_counts_cores && count % r.cores_per_chip != 0)
        throw InputError(file, path, accelerator_type + ": core count must be a multiple of " +
                                         std::to_string(r.cores_per_chip));
    const int chips = r.type_counts_cores ? count / r.cores_per_chip : count;
    auto it = r.shapes.find(chips);
    if (it == r.shapes.end()) {
        std::string known;
        for (const auto& [n, _] : r.shapes) known += (known.empty() ? "" : ", ") + r.type_prefix + "-" +
                                                      std::to_string(r.type_counts_cores ? n * r.cores_per_chip : n);
        throw InputError(file, path, "no such slice \"" + accelerator_type + "\" (" + std::to_string(chips) +
                                         " chips); known: " + known);
    }
    if (chips > r.max_slice_chips)
        throw InputError(file, path, accelerator_type + " has " + std::to_string(chips) +
                                         " chips, more than the largest slice (" + std::to_string(r.max_slice_chips) + ")");
    if (slices < 1) throw InputError(file, path, "slices must be >= 1");
    if (static_cast<long long>(chips) * slices > limits::max_chips)
        throw InputError(file, path, std::to_string(slices) + " x " + accelerator_type + " is more than " +
                                         std::to_string(limits::max_chips) + " chips, the most podsim simulates");
    SystemSpec s;
    s.chip = *chip;
    s.accelerator_type = accelerator_type;
    s.slices = slices;
    s.chips = chips * slices;
    s.torus_dims = it->second;
    for (int d : s.torus_dims) {
        bool wrap = false;
        if (r.wraparound == "cube4") wrap = chips >= 64 && d % 4 == 0;
        else if (r.wraparound == "axis16") wrap = d == 16;
        s.wraps.push_back(wrap);
    }
    s.label = slices > 1 ? std::to_string(slices) + " x " + accelerator_type : accelerator_type;
    return s;
}

SystemSpec Catalog::gpu_system(const std::string& machine_type, int nodes, const std::string& file,
                               const std::string& path) const {
    const NodeSpec* n = find_node(machine_type);
    if (!n) {
        std::string known;
        for (const auto& x : nodes_) known += (known.empty() ? "" : ", ") + x.id;
        const std::string hint = node_hint(machine_type);
        throw InputError(file, path, "unknown machine type \"" + machine_type + "\"" +
                                         (hint.empty() ? "; known: " + known : hint + " (all: " + known + ")"));
    }
    if (nodes < 1) throw InputError(file, path, "nodes must be >= 1");
    if (static_cast<long long>(nodes) * n->gpus_per_node > limits::max_chips)
        throw InputError(file, path, std::to_string(nodes) + " x " + n->id + " is more than " +
                                         std::to_string(limits::max_chips) + " GPUs, the most podsim simulates");
    SystemSpec s;
    s.is_gpu = true;
    s.node = *n;
    s.chip = *find_chip(n->chip);
    s.nodes = nodes;
    s.chips = nodes * n->gpus_per_node;
    s.nvlink_domain_gpus = n->domain_gpus();
    s.label = std::to_string(nodes) + " x " + n->id;
    return s;
}

std::optional<SystemSpec> Catalog::resized(const SystemSpec& base, int chips) const {
    if (chips < 1 || chips > limits::max_chips) return std::nullopt;
    if (chips == base.chips) return base;
    // What the scenario said of its cluster besides the size goes with it (the ranks' speed spread too).
    auto keep = [&](SystemSpec s) {
        s.rank_speed_cv = base.rank_speed_cv;
        return std::optional<SystemSpec>(std::move(s));
    };
    if (base.is_gpu) {
        if (chips % base.node.gpus_per_node != 0) return std::nullopt;
        SystemSpec s = gpu_system(base.node.id, chips / base.node.gpus_per_node, "", "");
        s.nodes_per_leaf = base.nodes_per_leaf, s.oversubscription = base.oversubscription;
        s.nvlink_domain_gpus = base.nvlink_domain_gpus;
        return keep(std::move(s));
    }
    const auto& r = *base.chip.tpu;
    auto type_for = [&](int n) { return r.type_prefix + "-" + std::to_string(r.type_counts_cores ? n * r.cores_per_chip : n); };
    if (r.shapes.count(chips) && chips <= r.max_slice_chips) return keep(tpu_system(type_for(chips), 1, "", ""));
    const int per_slice = base.chips_per_slice();
    if (chips % per_slice == 0) return keep(tpu_system(base.accelerator_type, chips / per_slice, "", ""));
    return std::nullopt;
}

}  // namespace podsim
