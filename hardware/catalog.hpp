// The hardware catalog: chips, GPU nodes and prices loaded from the JSON files in hardware/catalog/.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "hardware/chip.hpp"
#include "hardware/node.hpp"
#include "hardware/price.hpp"
#include "hardware/storage.hpp"
#include "hardware/system.hpp"

namespace podsim {

class Catalog {
public:
    static Catalog load(const std::string& dir);  // throws InputError naming the bad file

    // By id or alias, compared ignoring case, '-', '_', ' ' and '.' ("h100 sxm5 80gb" finds h100-sxm).
    const ChipSpec* find_chip(const std::string& name) const;
    const NodeSpec* find_node(const std::string& name) const;
    // For errors about an unknown name: "; nearest known: b200, gb200" (ids), or "" when nothing is near.
    std::string chip_hint(const std::string& name) const;
    std::string node_hint(const std::string& name) const;
    const std::vector<ChipSpec>& chips() const { return chips_; }
    const std::vector<NodeSpec>& nodes() const { return nodes_; }
    const std::vector<PriceEntry>& prices() const { return prices_; }
    const std::vector<StorageSpec>& storage() const { return storage_; }
    const StorageSpec* find_storage(const std::string& id) const;  // by id, exactly
    const PriceEntry* price_for(const std::string& sku, const std::string& region = "") const;

    // "v4-2048" (optionally x slices) -> a TPU system; throws InputError(file, path, why) when unknown or invalid.
    SystemSpec tpu_system(const std::string& accelerator_type, int slices, const std::string& file,
                          const std::string& path) const;
    SystemSpec gpu_system(const std::string& machine_type, int nodes, const std::string& file,
                          const std::string& path) const;

    // The same kind of system with `chips` chips (what-if scaling): GPU clusters by node count (same fabric
    // settings); TPU as one slice of that size where the generation has one, else as multislice of the base
    // slice. nullopt when no such system exists (e.g. a TPU count that is neither a slice nor whole slices).
    std::optional<SystemSpec> resized(const SystemSpec& base, int chips) const;

private:
    std::vector<ChipSpec> chips_;
    std::vector<NodeSpec> nodes_;
    std::vector<PriceEntry> prices_;
    std::vector<StorageSpec> storage_;
};

// The catalog directory compiled into the binary (PODSIM_CATALOG_DIR), overridable by $PODSIM_CATALOG.
std::string default_catalog_dir();

}  // namespace podsim
