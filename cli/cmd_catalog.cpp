// podsim catalog: what the hardware and software catalog holds (chips, systems, prices, frameworks) with the key
// figures and where each came from, so that a user sees what podsim knows before writing a scenario.
#include <fmt/format.h>

#include <algorithm>

#include "cli/commands.hpp"
#include "hardware/catalog.hpp"
#include "models/software_stack.hpp"

namespace podsim {

namespace {

constexpr const char* kSections[] = {"chips", "systems", "prices", "frameworks"};

Json opt_number(double v) { return v > 0 ? Json(v) : Json(nullptr); }

std::string tflops(double v) { return v > 0 ? fmt::format("{:.0f}", v / 1e12) : "-"; }

// A price option as the catalog states it: a number, "not offered", or null (offered, price not known).
Json price_json(const std::optional<double>& v, bool not_offered) {
    if (not_offered) return "not offered";
    return v ? Json(*v) : Json(nullptr);
}
std::string price_text(const std::optional<double>& v, bool not_offered) {
    if (not_offered) return "not offered";
    return v ? fmt::format("{:.4g}", *v) : "unknown";
}

Json chips_json(const Catalog& cat) {
    Json a = Json::array();
    for (const auto& c : cat.chips()) {
        Json j = {{"id", c.id},
                  {"name", c.name},
                  {"aliases", c.aliases},
                  {"vendor", c.vendor},
                  {"kind", c.kind == ChipKind::tpu ? "tpu" : c.kind == ChipKind::gpu ? "gpu" : "cpu"},
                  {"peak_bf16_flops_per_s", opt_number(c.peak_bf16_flops_per_s)},
                  {"peak_fp8_flops_per_s", opt_number(c.peak_fp8_flops_per_s)},
                  {"peak_int8_ops_per_s", opt_number(c.peak_int8_ops_per_s)},
                  {"peak_fp4_flops_per_s", opt_number(c.peak_fp4_flops_per_s)},
                  {"hbm_bytes", c.hbm_bytes},
                  {"hbm_bytes_per_s", c.hbm_bytes_per_s},
                  {"power_w", opt_number(c.power_w)},
                  {"file", c.file}};
        if (c.kind == ChipKind::tpu)
            j["interconnect"] = {{"ici_links", c.ici_links}, {"ici_link_bytes_per_s", c.ici_link_bytes_per_s}};
        else
            j["interconnect"] = {{"nvlink_bytes_per_s", opt_number(c.nvlink_bytes_per_s)}};
        if (c.tpu)
            j["tpu_slices"] = {{"type_prefix", c.tpu->type_prefix},
                               {"type_counts", c.tpu->type_counts_cores ? "cores" : "chips"},
                               {"max_slice_chips", c.tpu->max_slice_chips},
                               {"chips_per_host", c.tpu->chips_per_host},
                               {"dcn_bytes_per_s_per_chip", c.tpu->dcn_bytes_per_s_per_chip}};
        a.push_back(j);
    }
    return a;
}

Json systems_json(const Catalog& cat) {
    Json a = Json::array();
    for (const auto& n : cat.nodes())
        a.push_back({{"id", n.id},
                     {"kind", "gpu_node"},
                     {"aliases", n.aliases},
                     {"provider", n.provider},
                     {"chip", n.chip},
                     {"gpus_per_node", n.gpus_per_node},
                     {"nvlink_domain_gpus", n.domain_gpus()},
                     {"nvlink_sharp", n.nvlink_sharp},
                     {"network_sharp", n.network_sharp},
                     {"gpu_nics_per_node", n.gpu_nics_per_node},
                     {"gpu_nic_bytes_per_s", n.gpu_nic_bytes_per_s},
                     {"network", n.network},
                     {"fabric", n.fabric.empty() ? Json(nullptr) : Json(n.fabric)},
                     {"file", n.file}});
    for (const auto& c : cat.chips())
        if (c.tpu) {
            Json shapes = Json::object();
            for (const auto& [chips, dims] : c.tpu->shapes) {
                std::string s;
                for (int d : dims) s += (s.empty() ? "" : "x") + std::to_string(d);
                shapes[std::to_string(chips)] = s;
            }
            a.push_back({{"id", c.tpu->type_prefix + "-*"},
                         {"kind", "tpu_slice"},
                         {"provider", "gcp"},
                         {"chip", c.id},
                         {"max_slice_chips", c.tpu->max_slice_chips},
                         {"chips_per_host", c.tpu->chips_per_host},
                         {"dcn_bytes_per_s_per_chip", c.tpu->dcn_bytes_per_s_per_chip},
                         {"slice_shapes", shapes},
                         {"file", c.file}});
        }
    return a;
}

Json prices_json(const Catalog& cat) {
    Json a = Json::array();
    for (const auto& p : cat.prices())
        a.push_back({{"sku", p.sku},
                     {"unit", p.unit},
                     {"region", p.region},
                     {"on_demand_usd", price_json(p.on_demand_usd, p.not_offered[0])},
                     {"spot_usd", price_json(p.spot_usd, p.not_offered[1])},
                     {"commit_1y_usd", price_json(p.commit_1y_usd, p.not_offered[2])},
                     {"commit_3y_usd", price_json(p.commit_3y_usd, p.not_offered[3])},
                     {"dws_flex_start_usd", price_json(p.dws_flex_start_usd, p.dws_flex_start_not_offered)},
                     {"dws_calendar_usd", price_json(p.dws_calendar_usd, p.dws_calendar_not_offered)},
                     {"source", p.source},
                     {"source_date", p.source_date}});
    return a;
}

Json frameworks_json(const std::vector<SoftwareStack>& stacks) {
    Json a = Json::array();
    for (const auto& s : stacks) a.push_back({{"id", s.id}, {"description", s.description}, {"names", s.names}});
    return a;
}

std::string text(const std::string& section, const Catalog& cat, const std::vector<SoftwareStack>& stacks) {
    std::string o;
    if (section == "chips") {
        o += fmt::format("chips (hardware/catalog/chips/; dense TFLOP/s, '-' where the chip has none):\n  {:<14} {:<36} "
                         "{:>6} {:>6} {:>6} {:>6} {:>8} {:>7} {:>6}  aliases\n",
                         "id", "name", "bf16", "fp8", "int8", "fp4", "HBM GB", "TB/s", "W");
        for (const auto& c : cat.chips()) {
            std::string al;
            for (const auto& a : c.aliases) al += (al.empty() ? "" : ", ") + a;
            o += fmt::format("  {:<14} {:<36} {:>6} {:>6} {:>6} {:>6} {:>8.0f} {:>7.2f} {:>6}  {}\n", c.id, c.name,
                             tflops(c.peak_bf16_flops_per_s), tflops(c.peak_fp8_flops_per_s),
                             tflops(c.peak_int8_ops_per_s), tflops(c.peak_fp4_flops_per_s), c.hbm_bytes / 1e9,
                             c.hbm_bytes_per_s / 1e12, c.power_w > 0 ? fmt::format("{:.0f}", c.power_w) : "-", al);
        }
    } else if (section == "systems") {
        o += fmt::format("GPU systems (hardware/catalog/systems/):\n  {:<22} {:<8} {:<8} {:>5} {:>7} {:>5} {:>6} {:>12}  "
                         "network / fabric\n",
                         "id", "provider", "chip", "GPUs", "NVLink", "NVLS", "SHARP", "NICs x Gb/s");
        for (const auto& n : cat.nodes())
            o += fmt::format("  {:<22} {:<8} {:<8} {:>5} {:>7} {:>5} {:>6} {:>12}  {}{}\n", n.id, n.provider, n.chip,
                             n.gpus_per_node, n.domain_gpus(), n.nvlink_sharp ? "yes" : "no",
                             n.network_sharp ? "yes" : "no",
                             fmt::format("{} x {:.0f}", n.gpu_nics_per_node, n.gpu_nic_bytes_per_s * 8 / 1e9), n.network,
                             n.fabric.empty() ? "" : "; " + n.fabric);
        o += "TPU slices (per chip generation):\n";
        for (const auto& c : cat.chips())
            if (c.tpu)
                o += fmt::format("  {:<10} {:<14} up to {} chips per slice, {} chips per host, DCN {:.0f} Gb/s per chip, "
                                 "{} shapes\n",
                                 c.tpu->type_prefix + "-N", c.id, c.tpu->max_slice_chips, c.tpu->chips_per_host,
                                 c.tpu->dcn_bytes_per_s_per_chip * 8 / 1e9, c.tpu->shapes.size());
    } else if (section == "prices") {
        o += fmt::format("prices (hardware/catalog/prices/; USD per unit-hour; unknown = offered, price not known):\n"
                         "  {:<20} {:<10} {:<16} {:>11} {:>11} {:>11} {:>11} {:>11}  date\n",
                         "sku", "unit", "region", "on-demand", "spot", "1y", "3y", "DWS flex");
        for (const auto& p : cat.prices())
            o += fmt::format("  {:<20} {:<10} {:<16} {:>11} {:>11} {:>11} {:>11} {:>11}  {}\n", p.sku, p.unit, p.region,
                             price_text(p.on_demand_usd, p.not_offered[0]), price_text(p.spot_usd, p.not_offered[1]),
                             price_text(p.commit_1y_usd, p.not_offered[2]), price_text(p.commit_3y_usd, p.not_offered[3]),
                             price_text(p.dws_flex_start_usd, p.dws_flex_start_not_offered), p.source_date);
    } else {
        o += "frameworks (hardware/catalog/software/; a scenario's training.framework):\n";
        for (const auto& s : stacks) o += fmt::format("  {:<20} {}\n", s.id, s.description);
    }
    return o;
}

}  // namespace

int cmd_catalog(const Args& args) {
    const CommonFlags f = parse_flags(args, "catalog");
    if (f.positional.size() > 1) throw UsageError("catalog: expected at most one section (chips, systems, prices or frameworks)");
    std::vector<std::string> shown;
    for (const char* s : kSections)
        if (f.positional.empty() || f.positional[0] == s) shown.push_back(s);
    if (shown.empty())
        throw UsageError("catalog: unknown section \"" + f.positional[0] +
                         "\" (expected chips, systems, prices or frameworks)");
    const std::string dir = default_catalog_dir();
    const Catalog cat = Catalog::load(dir);
    const std::vector<SoftwareStack> stacks = load_software_stacks(dir);
    std::string out;
    if (f.format == "json") {
        Json j = {{"schema_version", 1}};
        for (const auto& s : shown)
            j[s] = s == "chips" ? chips_json(cat) : s == "systems" ? systems_json(cat)
                   : s == "prices" ? prices_json(cat) : frameworks_json(stacks);
        out = j.dump(2) + "\n";
    } else {
        for (const auto& s : shown) out += (out.empty() ? "" : "\n") + text(s, cat, stacks);
    }
    emit(out, f.out);
    return 0;
}

}  // namespace podsim
