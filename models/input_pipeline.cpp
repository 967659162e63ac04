#include "models/input_pipeline.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace podsim {

InputTiming input_timing(const DataSpec& d, const SystemSpec& sys, long long global_batch_seqs, int seq_len) {
    InputTiming t;
    t.hosts = sys.hosts();
    t.samples_per_host = static_cast<double>(global_batch_seqs) / t.hosts;
    t.bytes_per_host = t.samples_per_host * (d.bytes_per_sample + d.bytes_per_token * seq_len);
    // Storage: the job's aggregate rate (each host also capped by its general NIC, which storage traffic uses).
    const StorageRate rate = storage_rate(d.storage, false, t.hosts, sys.host_network_bytes_per_s(), d.capacity_tib);
    if (!rate.missing.empty()) throw std::invalid_argument(rate.missing);
    t.storage_bytes_per_s = rate.bytes_per_s;
    t.storage_s = t.bytes_per_host * t.hosts / rate.bytes_per_s;
    // CPU: the loader's cores on each host.
    t.cores = d.host_cpu_cores > 0 ? d.host_cpu_cores : sys.is_gpu ? sys.node.host_vcpus : sys.chip.tpu->host_vcpus;
    if (d.cpu_core_s_per_sample > 0 && t.cores <= 0)
        throw std::invalid_argument("the catalog has no vCPU count for " + sys.label +
                                    "'s hosts: state data.host_cpu_cores");
    t.cpu_s = d.cpu_core_s_per_sample > 0 ? t.samples_per_host * d.cpu_core_s_per_sample / t.cores : 0;
    if (t.storage_s >= t.cpu_s) {
        t.per_step_s = t.storage_s;
        t.bottleneck = fmt::format("storage ({}, {} at {:.3g} GB/s for the job)", d.storage.name, rate.binding,
                                   rate.bytes_per_s / 1e9);
    } else {
        t.per_step_s = t.cpu_s;
        t.bottleneck = fmt::format("host CPU ({} cores a host at {:.3g} core-ms a sample)", t.cores,
                                   d.cpu_core_s_per_sample * 1e3);
    }
    return t;
}

}  // namespace podsim
