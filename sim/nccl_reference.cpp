#include "sim/nccl_reference.hpp"

#include <fstream>

#include "hardware/input_error.hpp"

namespace podsim {

namespace {

Collective collective_named(const JsonObject& o) {
    const std::string c = o.one_of("collective", {"all_reduce", "reduce_scatter", "all_gather"});
    return c == "all_reduce" ? Collective::all_reduce
           : c == "reduce_scatter" ? Collective::reduce_scatter
                                   : Collective::all_gather;
}

// nccl-tests' bus-bandwidth factor: what each rank's links carry relative to the buffer.
double busbw_factor(Collective c, int n) {
    return c == Collective::all_reduce ? 2.0 * (n - 1) / n : double(n - 1) / n;
}

}  // namespace

std::string default_nccl_reference_file() { return default_catalog_dir() + "/collectives/nccl_tests.json"; }

std::vector<NcclReference> load_nccl_references(const std::string& file, const Catalog& cat) {
    std::ifstream in(file);
    if (!in) throw InputError(file, "$", "cannot open the file");
    Json j;
    try {
        j = Json::parse(in);
    } catch (const std::exception& e) {
        throw InputError(file, "$", std::string("not valid JSON: ") + e.what());
    }
    const JsonObject top(j, file, "$");
    std::vector<NcclReference> out;
    const Json& entries = top.array("entries");
    for (size_t i = 0; i < entries.size(); ++i) {
        const JsonObject e(entries[i], file, "$.entries[" + std::to_string(i) + "]");
        NcclReference r;
        r.id = e.string("id");
        r.system = e.string("system");
        r.collective = e.string("collective");
        r.kind = collective_named(e);
        r.gpus = e.count("gpus", 2, 1 << 20);
        r.bytes = e.positive("bytes");
        r.busbw_bytes_per_s = e.positive("busbw_bytes_per_s");
        r.algorithm = e.opt_string("algorithm").value_or("");
        r.source = e.string("source");
        const NodeSpec* n = cat.find_node(r.system);
        if (!n) e.fail("system", "unknown system \"" + r.system + "\" (a machine type of the catalog)");
        if (r.gpus % n->gpus_per_node != 0)
            e.fail("gpus", "expected whole nodes of " + std::to_string(n->gpus_per_node) + " GPUs");
        r.nodes = r.gpus / n->gpus_per_node;
        out.push_back(std::move(r));
    }
    return out;
}

NcclCheck check_nccl(const NcclReference& ref, const Catalog& cat, NetworkBackend backend) {
    const SystemSpec sys = cat.gpu_system(ref.system, ref.nodes, "", "");
    const std::vector<int> sizes{ref.gpus};
    const GroupRef g{sizes, 0, GroupRef::Part::all};
    const Collective c = ref.kind;
    CollectiveTimer timer(sys, backend);
    const CollectiveCost cost = timer.cost(c, ref.bytes, g);
    NcclCheck k;
    k.ref = ref;
    k.predicted_algorithm = cost.algorithm;
    k.predicted_busbw_bytes_per_s = busbw_factor(c, ref.gpus) * ref.bytes / cost.time_s;
    return k;
}

}  // namespace podsim
