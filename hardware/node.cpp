#include "hardware/node.hpp"

#include "hardware/chip.hpp"

namespace podsim {

NodeSpec node_from_json(const JsonObject& o) {
    o.only_keys({"schema_version", "id", "aliases", "provider", "chip", "gpus_per_node", "gpu_nics_per_node",
                 "gpu_nic_bytes_per_s", "network_latency_s", "network_efficiency", "network",
                 "host_network_bytes_per_s", "nvlink_domain_gpus", "nvlink_sharp", "network_sharp", "fabric",
                 "nvls_bw_fraction", "sharp_bw_fraction", "host_vcpus",
                 "host_memory_bytes", "host_link_bytes_per_s",
                 "notes", "sources"});
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
    n.host_vcpus = o.count("host_vcpus", 1, 100'000, 0);
    n.host_memory_bytes = o.number_in("host_memory_bytes", 1e9, 1e14, 0);
    n.host_link_bytes_per_s = o.number_in("host_link_bytes_per_s", 1e9, 1e13, 0);
    if ((n.host_memory_bytes > 0) != (n.host_link_bytes_per_s > 0))
        o.fail(n.host_memory_bytes > 0 ? "host_link_bytes_per_s" : "host_memory_bytes",
               "host_memory_bytes and host_link_bytes_per_s go together (activation offload needs both)");
    n.nvlink_domain_gpus = o.count("nvlink_domain_gpus", 1, 1 << 16, n.gpus_per_node);
    if (n.nvlink_domain_gpus % n.gpus_per_node != 0)
        o.fail("nvlink_domain_gpus", "expected a multiple of gpus_per_node (" + std::to_string(n.gpus_per_node) + ")");
    n.nvlink_sharp = o.opt_bool("nvlink_sharp").value_or(false);
    n.network_sharp = o.opt_bool("network_sharp").value_or(false);
    n.fabric = o.opt_string("fabric").value_or("");
    // In-network reduction: the capability and its achieved rate go together.
    if (n.nvlink_sharp) n.nvls_bw_fraction = o.number_in("nvls_bw_fraction", 1e-3, 1);
    else if (o.has("nvls_bw_fraction")) o.fail("nvls_bw_fraction", "only with \"nvlink_sharp\": true");
    if (n.network_sharp) n.sharp_bw_fraction = o.number_in("sharp_bw_fraction", 1e-3, 1);
    else if (o.has("sharp_bw_fraction")) o.fail("sharp_bw_fraction", "only with \"network_sharp\": true");
    // The fabric facts are figures too: each stated one needs its source.
    const auto sources = o.object("sources");
    for (const char* k : {"nvlink_sharp", "network_sharp", "fabric"})
        if (o.has(k) && !sources.has(k)) sources.fail(k, std::string("every figure needs a source; none given for \"") + k + "\"");
    return n;
}

}  // namespace podsim
