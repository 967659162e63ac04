#include "hardware/node.hpp"

#include "hardware/chip.hpp"

namespace podsim {

NodeSpec node_from_json(const JsonObject& o) {
    o.only_keys({"schema_version", "id", "aliases", "provider", "chip", "gpus_per_node", "gpu_nics_per_node",
                 "gpu_nic_bytes_per_s", "network_latency_s", "network_efficiency", "network",
                 "host_network_bytes_per_s", "notes", "sources"});
    if (o.integer("schema_version") != 1) o.fail("schema_version", "expected 1");
    require_sources(o);
    NodeSpec n;
    n.file = o.file();
    n.id = o.string("id");
    n.aliases = o.string_array("aliases");
    n.provider = o.one_of("provider", {"gcp", "onprem"});
    n.chip = o.string("chip");
    n.gpus_per_node = o.count("gpus_per_node", 1, 1024);
    n.gpu_nics_per_node = o.count("gpu_nics_per_node", 1, 1024);
    n.gpu_nic_bytes_per_s = o.positive("gpu_nic_bytes_per_s");
    n.network_latency_s = o.non_negative("network_latency_s");
    n.network_efficiency = o.positive("network_efficiency");
    if (n.network_efficiency > 1) o.fail("network_efficiency", "expected a fraction in (0, 1]");
    n.network = o.string("network");
    n.host_network_bytes_per_s = o.positive("host_network_bytes_per_s");
    return n;
}

}  // namespace podsim
