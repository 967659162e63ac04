#include "hardware/storage.hpp"

#include <algorithm>
#include <limits>

namespace podsim {

namespace {

StorageLimits limits_from(const JsonObject& o) {
    o.only_keys({"per_client_bytes_per_s", "per_instance_bytes_per_s", "per_tib_bytes_per_s"});
    StorageLimits l;
    auto rate = [&](const char* key) -> std::optional<double> {
        const auto v = o.opt_number(key);
        if (v && !(*v > 0)) o.fail(key, "a rate above 0 bytes/s, or null when not published");
        return v;
    };
    l.per_client_bytes_per_s = rate("per_client_bytes_per_s");
    l.per_instance_bytes_per_s = rate("per_instance_bytes_per_s");
    l.per_tib_bytes_per_s = rate("per_tib_bytes_per_s");
    return l;  // all null: nothing published for this direction (storage_rate then refuses it)
}

}  // namespace

StorageSpec storage_from_json(const JsonObject& o) {
    o.only_keys({"schema_version", "id", "name", "shared", "read", "write", "sources", "notes"});
    if (o.integer("schema_version") != 1) o.fail("schema_version", "expected 1");
    StorageSpec s;
    s.id = o.string("id");
    s.name = o.string("name");
    s.shared = o.boolean("shared");
    s.read = limits_from(o.object("read"));
    s.write = limits_from(o.object("write"));
    s.notes = o.opt_string("notes").value_or("");
    const JsonObject src = o.object("sources");
    for (const auto& [k, v] : src.raw().items()) s.sources[k] = src.string(k);
    // Every published figure cites its source.
    for (const char* dir : {"read", "write"}) {
        const StorageLimits& l = std::string(dir) == "read" ? s.read : s.write;
        for (const auto& [key, val] : {std::pair{"per_client_bytes_per_s", l.per_client_bytes_per_s},
                                       std::pair{"per_instance_bytes_per_s", l.per_instance_bytes_per_s},
                                       std::pair{"per_tib_bytes_per_s", l.per_tib_bytes_per_s}})
            if (val && !s.sources.count(std::string(dir) + "." + key))
                o.fail("sources", std::string("a source for ") + dir + "." + key);
    }
    return s;
}

StorageRate storage_rate(const StorageSpec& s, bool write, int hosts, double host_link_bytes_per_s, double capacity_tib) {
    const StorageLimits& l = write ? s.write : s.read;
    StorageRate r;
    if (!l.per_client_bytes_per_s && !l.per_instance_bytes_per_s && !l.per_tib_bytes_per_s) {
        r.missing = s.name + " publishes no " + (write ? "write" : "read") + " throughput";
        return r;
    }
    double best = std::numeric_limits<double>::infinity();
    auto cap = [&](double v, const char* why) {
        if (v < best) best = v, r.binding = why;
    };
    if (l.per_client_bytes_per_s) cap(hosts * *l.per_client_bytes_per_s, "per-client limit");
    if (host_link_bytes_per_s > 0) cap(hosts * host_link_bytes_per_s, "host network");
    if (s.shared && l.per_instance_bytes_per_s) cap(*l.per_instance_bytes_per_s, "instance limit");
    if (s.shared && l.per_tib_bytes_per_s) {
        if (capacity_tib > 0) cap(capacity_tib * *l.per_tib_bytes_per_s, "per-TiB limit");
        else if (!l.per_instance_bytes_per_s)
            r.missing = s.name + " throughput scales with capacity: state capacity_tib";
    }
    if (!r.missing.empty() || best == std::numeric_limits<double>::infinity()) return r;
    r.bytes_per_s = best;
    return r;
}

}  // namespace podsim
