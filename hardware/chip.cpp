#include "hardware/chip.hpp"
#include "hardware/limits.hpp"

#include <sstream>

namespace podsim {

namespace {

void collect_numeric_keys(const Json& j, const std::string& prefix, std::vector<std::string>& out) {
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
        if (it.key() == "sources" || it.key() == "schema_version" || it.key() == "shapes") continue;
        if (it->is_number()) out.push_back(key);
        else if (it->is_object()) collect_numeric_keys(*it, key, out);
    }
}

std::vector<int> parse_dims(const JsonObject& o, const std::string& key, const std::string& text) {
    std::vector<int> dims;
    std::stringstream ss(text);
    std::string part;
    while (std::getline(ss, part, 'x')) {
        try {
            size_t used = 0;
            int d = std::stoi(part, &used);
            if (used != part.size() || d < 1) throw std::invalid_argument(part);
            dims.push_back(d);
        } catch (const std::exception&) {
            o.fail(key, "expected a shape like \"4x4x8\", got \"" + text + "\"");
        }
    }
    return dims;
}

}  // namespace

void require_sources(const JsonObject& o) {
    std::vector<std::string> keys;
    collect_numeric_keys(o.raw(), "", keys);
    auto sources = o.object("sources");
    for (const auto& k : keys) {
        if (!sources.has(k)) sources.fail(k, "every figure needs a source; none given for \"" + k + "\"");
        if (!sources.raw().at(k).is_string() || sources.raw().at(k).get<std::string>().empty())
            sources.fail(k, "expected a non-empty citation string");
    }
}

EfficiencyProfile profile_from_json(const JsonObject& o, std::string* chip_id) {
    o.only_keys({"schema_version", "chip", "precision", "matmul_peak_fraction", "method", "fitted_on", "held_out",
                 "fit", "notes"});
    if (o.integer("schema_version") != 1) o.fail("schema_version", "expected 1");
    EfficiencyProfile p;
    *chip_id = o.string("chip");
    p.precision = o.one_of("precision", {"16bit", "fp8"});
    p.matmul_peak_fraction = o.positive("matmul_peak_fraction");
    if (p.matmul_peak_fraction > 1) o.fail("matmul_peak_fraction", "expected a fraction in (0, 1]");
    p.method = o.string("method");
    p.file = o.file();
    return p;
}

ChipSpec chip_from_json(const JsonObject& o) {
    o.only_keys({"schema_version", "id", "name", "aliases", "vendor", "kind", "peak_bf16_flops_per_s",
                 "peak_fp16_flops_per_s", "peak_fp8_flops_per_s", "peak_int8_ops_per_s", "peak_fp4_flops_per_s", "hbm_bytes",
                 "hbm_bytes_per_s", "power_w", "silicon_of", "devices_per_chip", "interconnect", "efficiency", "tpu_slices", "notes",
                 "sources"});
    if (o.integer("schema_version") != 1) o.fail("schema_version", "expected 1");
    require_sources(o);
    ChipSpec c;
    c.file = o.file();
    c.id = o.string("id");
    c.name = o.string("name");
    c.aliases = o.string_array("aliases");
    c.vendor = o.string("vendor");
    const std::string kind = o.one_of("kind", {"tpu", "gpu", "cpu"});
    c.kind = kind == "tpu" ? ChipKind::tpu : kind == "gpu" ? ChipKind::gpu : ChipKind::cpu;
    c.peak_bf16_flops_per_s = o.positive("peak_bf16_flops_per_s");
    c.peak_fp16_flops_per_s = o.opt_number("peak_fp16_flops_per_s").value_or(0);
    c.peak_fp8_flops_per_s = o.opt_number("peak_fp8_flops_per_s").value_or(0);
    c.peak_int8_ops_per_s = o.opt_number("peak_int8_ops_per_s").value_or(0);
    c.peak_fp4_flops_per_s = o.opt_number("peak_fp4_flops_per_s").value_or(0);
    // fp4 GEMMs are priced at the fp8 GEMM efficiency (no published fp4 fit), so fp4 needs fp8.
    if (c.has_fp4() && !c.has_fp8()) o.fail("peak_fp4_flops_per_s", "a chip with fp4 needs peak_fp8_flops_per_s too");
    c.hbm_bytes = o.positive("hbm_bytes");
    c.hbm_bytes_per_s = o.positive("hbm_bytes_per_s");
    c.power_w = o.opt_number("power_w").value_or(0);
    c.silicon_of = o.opt_string("silicon_of").value_or("");
    c.devices_per_chip = o.count("devices_per_chip", 1, 16, 1);  // absent: the chip is one device

    auto ic = o.object("interconnect");
    if (c.kind == ChipKind::tpu) {
        ic.only_keys({"ici_links", "ici_link_bytes_per_s", "ici_hop_latency_s"});
        c.ici_links = ic.count("ici_links", 1, 64);
        c.ici_link_bytes_per_s = ic.positive("ici_link_bytes_per_s");
        c.ici_hop_latency_s = ic.non_negative("ici_hop_latency_s");
    } else {
        ic.only_keys({"nvlink_bytes_per_s", "nvlink_latency_s"});
        c.nvlink_bytes_per_s = ic.positive("nvlink_bytes_per_s");
        c.nvlink_latency_s = ic.non_negative("nvlink_latency_s");
    }

    auto e = o.object("efficiency");
    e.only_keys({"matmul_peak_fraction", "matmul_half_dim", "fp8_matmul_peak_fraction", "attention_peak_fraction",
                 "flash2_attention_peak_fraction", "attention_backward_rate", "memory_bw_fraction", "kernel_overhead_s", "collective_bw_fraction", "comm_interference_fraction",
                 "gemm_epilogue"});
    auto fraction = [&](const char* k) {
        double v = e.positive(k);
        if (v > 1) e.fail(k, "expected a fraction in (0, 1]");
        return v;
    };
    c.eff.matmul_peak_fraction = fraction("matmul_peak_fraction");
    c.eff.matmul_half_dim = e.non_negative("matmul_half_dim");
    c.eff.fp8_matmul_peak_fraction = c.has_fp8() ? fraction("fp8_matmul_peak_fraction") : 0;
    c.eff.attention_peak_fraction = fraction("attention_peak_fraction");
    c.eff.flash2_attention_peak_fraction = e.has("flash2_attention_peak_fraction")
                                               ? fraction("flash2_attention_peak_fraction")
                                               : c.eff.attention_peak_fraction;
    c.eff.attention_backward_rate = e.has("attention_backward_rate") ? fraction("attention_backward_rate") : 1.0;
    c.eff.memory_bw_fraction = fraction("memory_bw_fraction");
    c.eff.kernel_overhead_s = e.non_negative("kernel_overhead_s");
    c.eff.collective_bw_fraction = fraction("collective_bw_fraction");
    c.eff.comm_interference_fraction = e.non_negative("comm_interference_fraction");
    if (c.eff.comm_interference_fraction > 1) e.fail("comm_interference_fraction", "expected a fraction in [0, 1]");
    c.eff.gemm_epilogue_serial = e.one_of("gemm_epilogue", {"serial", "overlapped"}) == "serial";

    if (c.kind == ChipKind::tpu) {
        auto t = o.object("tpu_slices");
        t.only_keys({"type_prefix", "type_counts", "cores_per_chip", "chips_per_host", "max_slice_chips", "wraparound",
                     "dcn_bytes_per_s_per_chip", "dcn_latency_s", "dcn_contention_slices", "shapes",
                     "runtime_version", "host_vcpus"});
        TpuSliceRules r;
        r.type_prefix = t.string("type_prefix");
        r.type_counts_cores = t.one_of("type_counts", {"cores", "chips"}) == "cores";
        r.cores_per_chip = t.count("cores_per_chip", 1, 64);
        r.chips_per_host = t.count("chips_per_host", 1, 1024);
        r.max_slice_chips = t.count("max_slice_chips", 1, limits::max_chips);
        r.wraparound = t.one_of("wraparound", {"cube4", "axis16", "none"});
        r.dcn_bytes_per_s_per_chip = t.positive("dcn_bytes_per_s_per_chip");
        r.dcn_latency_s = t.non_negative("dcn_latency_s");
        r.dcn_contention_slices = t.number_in("dcn_contention_slices", 0.1, 1e6, 0);
        r.runtime_version = t.opt_string("runtime_version").value_or("");
        r.host_vcpus = t.count("host_vcpus", 1, 100'000, 0);
        auto shapes = t.object("shapes");
        for (auto it = shapes.raw().begin(); it != shapes.raw().end(); ++it) {
            const std::string key = "shapes." + it.key();
            int chips = 0;
            try {
                chips = std::stoi(it.key());
            } catch (const std::exception&) {
                t.fail(key, "expected a chip count as the key");
            }
            if (!it->is_string()) t.fail(key, "expected a shape string like \"4x4x8\"");
            auto dims = parse_dims(t, key, it->get<std::string>());
            long long prod = 1;
            for (int d : dims) prod *= d;
            if (prod != chips) t.fail(key, "shape does not multiply out to " + it.key() + " chips");
            r.shapes[chips] = dims;
        }
        c.tpu = r;
    } else if (o.has("tpu_slices")) {
        o.fail("tpu_slices", "only TPU chips have slice rules");
    }
    return c;
}

}  // namespace podsim
