#include "models/scenario.hpp"

#include <algorithm>
#include <stdexcept>

#include "hardware/limits.hpp"
#include "models/plan_completion.hpp"

namespace podsim {

namespace {
// The catalog storage a block's "storage" names, or an input error listing the catalog's.
const StorageSpec* storage_at(const JsonObject& o, const Catalog& cat) {
    const std::string id = o.string("storage");
    if (const StorageSpec* st = cat.find_storage(id)) return st;
    std::string known;
    for (const auto& x : cat.storage()) known += (known.empty() ? "" : ", ") + x.id;
    o.fail("storage", "a storage of the catalog (" + known + "), got \"" + id + "\"");
}
}  // namespace

Scenario scenario_from_json(const Json& j, const std::string& file, const Catalog& cat) {
    JsonObject o(j, file, "$");
    o.only_keys({"schema_version", "name", "description", "model", "system", "parallel", "batch", "training",
                 "pricing", "reliability", "data", "checkpoint", "notes"});
    if (o.integer("schema_version") != 1) o.fail("schema_version", "expected 1");
    Scenario s;
    s.file = file;
    s.name = o.string("name");
    s.description = o.opt_string("description").value_or("");
    s.model = model_from_json(o.object("model"));
    auto sys = o.object("system");
    sys.only_keys({"accelerator_type", "slices", "twisted", "machine_type", "nodes", "nodes_per_leaf",
                   "oversubscription", "nvlink_domain_gpus", "rank_speed_cv"});
    if (sys.has("accelerator_type")) {
        if (sys.has("machine_type")) sys.fail("machine_type", "give accelerator_type (TPU) or machine_type (GPU), not both");
        const int slices = sys.count("slices", 1, limits::max_slices, 1);
        s.system = cat.tpu_system(sys.string("accelerator_type"), slices, file, sys.at_path("accelerator_type"));
        if (sys.opt_bool("twisted").value_or(false)) {
            // Cloud offers twisted tori for 3D slices shaped AxAx2A or Ax2Ax2A (whole cubes).
            auto d = s.system.torus_dims;
            std::sort(d.begin(), d.end());
            const bool shape_ok = d.size() == 3 && d[0] >= 4 && (d[2] == 2 * d[0]) && (d[1] == d[0] || d[1] == d[2]);
            if (!shape_ok) sys.fail("twisted", "a twisted torus needs a 3D AxAx2A or Ax2Ax2A slice");
            s.system.twisted = true;
        }
        for (const char* k : {"nodes_per_leaf", "oversubscription", "nvlink_domain_gpus"})
            if (sys.has(k)) sys.fail(k, "only for GPU clusters");
    } else if (sys.has("machine_type")) {
        s.system = cat.gpu_system(sys.string("machine_type"), sys.count("nodes", 1, limits::max_chips), file,
                                  sys.at_path("machine_type"));
        if (sys.has("twisted")) sys.fail("twisted", "only for TPU slices");
        s.system.nodes_per_leaf = sys.count("nodes_per_leaf", 1, limits::max_chips, s.system.nodes_per_leaf);
        // 1 = full bisection; beyond 1000:1 a fabric is not a fabric.
        s.system.oversubscription = sys.number_in("oversubscription", 1, 1000, s.system.oversubscription);
        if (sys.has("nvlink_domain_gpus")) {
            // A job may use part of each NVLink domain (whole VMs of it), never more than the hardware has.
            const int most = s.system.node.domain_gpus(), per_vm = s.system.node.gpus_per_node;
            const int d = sys.count("nvlink_domain_gpus", per_vm, most);
            if (d % per_vm != 0)
                sys.fail("nvlink_domain_gpus", "expected whole VMs/nodes: a multiple of " + std::to_string(per_vm) +
                                                   " GPUs, at most " + std::to_string(most) + " (" + s.system.node.id + ")");
            s.system.nvlink_domain_gpus = d;
        }
    } else {
        sys.fail("accelerator_type", "missing: expected accelerator_type (e.g. \"v4-2048\") or machine_type + nodes");
    }
    // A coefficient of variation of one SKU's speeds: measured spreads are a few percent (Sinha et al., SC22); 0.5
    // bounds it well above any cluster's.
    s.system.rank_speed_cv = sys.number_in("rank_speed_cv", 0, 0.5, 0);
    auto training = o.object("training");
    static const Json no_object = Json::object();
    const JsonObject empty(no_object, file, "$.parallel");
    PartialPlan partial = plan_from_json(o.has("parallel") ? o.object("parallel") : empty, o.object("batch"), training);
    s.stack = default_scenario_stack();
    if (training.has("framework")) {
        const std::string name = training.string("framework");
        const auto stacks = load_software_stacks(default_catalog_dir());
        const SoftwareStack* st = find_stack(stacks, name);
        if (!st) {
            std::string known;
            for (const auto& x : stacks) known += (known.empty() ? "" : ", ") + x.names.front();
            training.fail("framework", "unknown framework \"" + name + "\"; the software catalog has: " + known);
        }
        s.stack = *st;
    }
    // Stated bytes win over the stack's weight keeping.
    apply_stack_behaviours(s.stack, partial, training.has("grad_reduce_bytes") || training.has("param_gather_bytes") ||
                                                 training.has("compute_weight_copy") || !training.has("framework"));
    // torch.compile as stated (fused elementwise kernels), else the stack's default.
    if (training.has("compile")) partial.plan.eager_elementwise = !training.boolean("compile");
    if (const std::string why = settle_offload(partial, s.system, s.stack); !why.empty())
        training.fail("offload_layers", why);
    s.plan = partial.plan;
    s.free = partial.free;
    s.token_budget = training.number_in("token_budget", 0, limits::max_tokens, 0);
    s.evaluation = evaluation_from_json(training);
    if (auto pr = o.opt_object("pricing")) {
        pr->only_keys({"region", "negotiated"});
        if (auto n = pr->opt_object("negotiated")) {
            n->only_keys({"unit", "on-demand", "spot", "1y", "3y", "source"});
            NegotiatedPrice np;
            np.sku = s.system.is_gpu ? s.system.node.id : s.system.chip.id;
            const std::string unit = s.system.is_gpu ? "vm_hour" : "chip_hour";
            np.unit = n->one_of("unit", {"chip_hour", "vm_hour"});
            if (np.unit != unit)
                n->fail("unit", "\"" + unit + "\": " + np.sku + " is priced per " +
                                    (s.system.is_gpu ? "VM-hour (the whole VM)" : "chip-hour"));
            bool any = false;
            for (PriceOption po : kAllPriceOptions) {
                const std::string key = po == PriceOption::on_demand ? "on-demand" : po == PriceOption::spot ? "spot"
                                        : po == PriceOption::commit_1y ? "1y" : "3y";
                if (n->has(key)) np.usd[static_cast<int>(po)] = n->number_in(key, 1e-6, 1e6), any = true;
            }
            if (!any) n->fail("on-demand", "at least one negotiated price (on-demand, spot, 1y, 3y) in USD per " + unit);
            np.source = n->string("source");
            s.negotiated = np;
        }
        if (pr->has("region") || !s.negotiated) s.region = pr->string("region");
        // A region no price entry has would leave every dollar figure out without saying why.
        std::string known;
        bool found = false;
        for (const auto& e : cat.prices()) {
            found = found || e.region == s.region;
            if (known.find(e.region) == std::string::npos) known += (known.empty() ? "" : ", ") + e.region;
        }
        if (!s.region.empty() && !found)
            pr->fail("region", "no prices in region \"" + s.region + "\"; the catalog prices: " + known);
    }
    if (auto r = o.opt_object("reliability")) {
        // Failure rates from the buyer's own fleet; each overrides hardware/catalog/reliability.json's.
        r->only_keys({"interruptions_per_chip_hour", "failures", "restart_overhead_s", "spot_preemptions_per_node_hour",
                      "checkpoint_bandwidth_fraction", "source"});
        ReliabilityOverrides& ro = s.reliability;
        if (auto f = r->opt_object("failures")) {
            f->only_keys({"chip_per_hour", "host_per_hour", "link_per_hour", "slice_per_hour", "software_per_chip_hour"});
            // Chips fail at some rate in every fleet: a job's MTBF stays finite.
            auto rate = [&](const char* key, std::optional<double>& to, double lo = 0) {
                if (f->has(key)) to = f->number_in(key, lo, 1);
            };
            rate("chip_per_hour", ro.chip_per_hour, 1e-12);
            rate("host_per_hour", ro.host_per_hour);
            rate("link_per_hour", ro.link_per_hour);
            rate("slice_per_hour", ro.slice_per_hour);
            rate("software_per_chip_hour", ro.software_per_chip_hour);
            if (r->has("interruptions_per_chip_hour"))
                r->fail("interruptions_per_chip_hour", "either one flat rate or \"failures\" per component, not both");
        }
        if (r->has("interruptions_per_chip_hour"))
            ro.interruptions_per_chip_hour = r->number_in("interruptions_per_chip_hour", 1e-12, 1);
        if (r->has("restart_overhead_s")) ro.restart_overhead_s = r->number_in("restart_overhead_s", 0, 7 * 86400);
        if (r->has("spot_preemptions_per_node_hour"))
            ro.spot_preemptions_per_node_hour = r->number_in("spot_preemptions_per_node_hour", 0, 10);
        if (r->has("checkpoint_bandwidth_fraction"))
            ro.checkpoint_bandwidth_fraction = r->number_in("checkpoint_bandwidth_fraction", 1e-3, 1);
        if (!ro.any()) r->fail("interruptions_per_chip_hour", "at least one failure figure");
        ro.source = r->string("source");
    }
    if (auto c = o.opt_object("checkpoint")) {
        c->only_keys({"storage", "capacity_tib", "async", "device_to_host_bytes_per_s", "source"});
        CheckpointSpec cs;
        const StorageSpec* st = storage_at(*c, cat);
        cs.storage = *st;
        cs.capacity_tib = c->number_in("capacity_tib", 0, 1e9, 0);
        cs.async = c->opt_bool("async").value_or(false);
        cs.device_to_host_bytes_per_s = c->number_in("device_to_host_bytes_per_s", 0, 1e15, 0);
        if (cs.async && cs.device_to_host_bytes_per_s <= 0)
            c->fail("device_to_host_bytes_per_s",
                    "the rate at which a chip copies its shard to host memory (async checkpoints pause the job for it)");
        cs.source = c->string("source");
        for (bool w : {true, false})
            if (const auto r = storage_rate(cs.storage, w, s.system.hosts(), 1, cs.capacity_tib); !r.missing.empty())
                c->fail("capacity_tib", r.missing);
        s.reliability.checkpoint = cs;
        if (s.reliability.source.empty()) s.reliability.source = cs.source;
    }
    if (auto d = o.opt_object("data")) {
        // The input pipeline (issue #15): where the data is read from, how many bytes a token or sample is, and the
        // host CPU it takes; the step waits when the hosts cannot feed it.
        d->only_keys({"storage", "capacity_tib", "bytes_per_token", "bytes_per_sample", "cpu_core_s_per_sample",
                      "host_cpu_cores", "prefetch_steps", "source"});
        DataSpec ds;
        const StorageSpec* st = storage_at(*d, cat);
        ds.storage = *st;
        ds.capacity_tib = d->number_in("capacity_tib", 0, 1e9, 0);
        ds.bytes_per_token = d->number_in("bytes_per_token", 0, 1e9, 0);
        ds.bytes_per_sample = d->number_in("bytes_per_sample", 0, 1e12, 0);
        if (ds.bytes_per_token <= 0 && ds.bytes_per_sample <= 0)
            d->fail("bytes_per_token", "bytes per token and/or bytes_per_sample above 0 (what a step reads)");
        ds.cpu_core_s_per_sample = d->number_in("cpu_core_s_per_sample", 0, 1e4, 0);
        ds.host_cpu_cores = d->count("host_cpu_cores", 1, 100'000, 0);
        ds.prefetch_steps = d->count("prefetch_steps", 0, 1'000, 2);
        ds.source = d->string("source");
        // Every figure the pipeline needs must be at hand now, not at the first simulation.
        try {
            (void)input_timing(ds, s.system, std::max<long long>(s.plan.global_batch, 1), s.model.seq_len);
        } catch (const std::invalid_argument& e) {
            d->fail(ds.cpu_core_s_per_sample > 0 && std::string(e.what()).find("vCPU") != std::string::npos
                        ? "host_cpu_cores"
                        : "capacity_tib",
                    e.what());
        }
        s.data = ds;
    }
    return s;
}

void complete_scenario(Scenario& s, const CompletionOptions& opt) {
    if (!s.free.any_structural()) return;
    const PlanCompletion c = complete_plan(s.model, s.system, PartialPlan{s.plan, s.free}, s.stack, opt);
    s.plan = c.plan;
    s.free = PlanFields{};
    s.plan_choices = c.chosen;
    if (!c.found) s.plan_choices.push_back("no feasible completion: " + c.reason);
}

Scenario load_scenario(const std::string& file, const Catalog& cat) {
    return scenario_from_json(load_json_file(file), file, cat);
}

}  // namespace podsim
