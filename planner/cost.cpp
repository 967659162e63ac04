#include "planner/cost.hpp"

#include <algorithm>
#include <cmath>

#include "models/result_checks.hpp"

namespace podsim {

const OptionCost* find_option(const CostReport& c, PriceOption p) {
    for (const auto& oc : c.options)
        if (oc.option == p) return &oc;
    return nullptr;
}

namespace {

// The catalog's entry for the system's SKU with the negotiated options in place (for that SKU only: a what-if on
// another machine type is priced at its list price).
std::optional<PriceEntry> effective_price(const Catalog& cat, const SystemSpec& sys, const std::string& region,
                                          const NegotiatedPrice* negotiated) {
    const std::string sku = sys.is_gpu ? sys.node.id : sys.chip.id;
    const PriceEntry* list = cat.price_for(sku, region);
    if (!negotiated || negotiated->sku != sku) return list ? std::optional<PriceEntry>(*list) : std::nullopt;
    PriceEntry e = list ? *list : PriceEntry{};
    e.sku = sku, e.unit = negotiated->unit;
    if (!list) e.region = region.empty() ? "negotiated" : region;
    std::string which;
    for (PriceOption o : kAllPriceOptions)
        if (const auto& u = negotiated->usd[static_cast<int>(o)]) {
            e.slot(o) = *u;
            e.not_offered[static_cast<int>(o)] = false;
            which += (which.empty() ? "" : ", ") + std::string(to_string(o));
        }
    e.source = "negotiated (the scenario's pricing.negotiated: " + negotiated->source + ") for " + which +
               (list ? "; other options: catalog list prices (" + list->source + ")" : "");
    e.source_date = list ? list->source_date : "";
    return e;
}

}  // namespace

std::optional<double> system_usd_per_hour(const Catalog& cat, const SystemSpec& sys, const std::string& region,
                                          PriceOption option, const NegotiatedPrice* negotiated) {
    const auto p = effective_price(cat, sys, region, negotiated);
    if (!p) return std::nullopt;
    const auto u = p->usd(option);
    if (!u) return std::nullopt;
    return *u * (sys.is_gpu ? sys.nodes : sys.chips);
}

namespace {

// Every figure a cost report prints is finite and non-negative, and goodput a fraction (models/result_checks.hpp).
void check_costs(const CostReport& c) {
    const double inf = INFINITY;
    const std::string at = "cost report";
    check_figure("time_to_train_s", c.time_to_train_s, 0, inf, at);
    check_figure("chip_hours", c.chip_hours, 0, inf, at);
    check_figure("eval_s", c.train.eval_s, 0, inf, at);
    check_figure("eval_share", c.train.eval_share(), 0, 1, at);
    for (const Goodput* g : {&c.goodput, &c.goodput_spot}) {
        check_figure("goodput", g->goodput, 0, 1, at);
        check_figure("effective_time_s", g->effective_time_s, 0, inf, at);
    }
    for (const OptionCost& o : c.options)
        for (const auto& v : {o.usd_per_hour, o.usd_per_million_tokens, o.usd_total, o.usd_total_with_failures,
                              o.usd_commitment, o.usd_outlay, std::optional<double>(o.effective_time_s)})
            if (v) check_figure(to_string(o.option), *v, 0, inf, at + " (dollars and times)");
}

}  // namespace

CostReport cost_report(const ModelSpec& m, const SystemSpec& sys, const StepResult& step, double token_budget,
                       const Catalog& cat, const std::string& region, const ReliabilityInputs& rel,
                       const NegotiatedPrice* negotiated) {
    CostReport c;
    c.token_budget = token_budget;
    if (!step.feasible || step.tokens_per_s <= 0) return c;
    c.reliability_file = rel.file;
    c.failures = job_failures(sys, rel);
    c.goodput = goodput_model(m, sys, step, token_budget, rel);
    c.goodput_spot = goodput_model(m, sys, step, token_budget, rel, sys.hosts() * rel.spot_preemptions_per_node_hour);
    c.train = train_time(token_budget, step);
    for (const auto& o : recovery_options(c.goodput, sys, step.dp, c.train.total_s, rel))
        c.recovery.push_back({o, std::nullopt});
    const double hours = c.train.total_s / 3600;
    c.time_to_train_s = c.train.total_s;
    c.chip_hours = hours * sys.chips;
    // Dollars buy wall time, evaluation passes included.
    const double wall_tokens_per_s =
        step.evaluation ? step.tokens_per_step / c.train.step_incl_eval_s : step.tokens_per_s;
    const std::string sku = sys.is_gpu ? sys.node.id : sys.chip.id;
    const std::optional<PriceEntry> price = effective_price(cat, sys, region, negotiated);
    const PriceEntry* p = price ? &*price : nullptr;
    if (!p) {
        c.no_price_reason = sys.is_gpu && sys.node.provider == "onprem"
                                ? sys.node.id + " is an on-premise system; the catalog has no hourly price for it"
                                : "no price for " + sku + (region.empty() ? "" : " in " + region) + " in the catalog";
        return c;
    }
    c.price_sku = sku;
    c.price_region = p->region;
    c.price_source = p->source;
    c.price_date = p->source_date;
    c.price_unit = p->unit;
    const double units = sys.is_gpu ? sys.nodes : sys.chips;
    for (PriceOption o : kAllPriceOptions) {
        OptionCost oc;
        oc.option = o;
        oc.offered = p->offered(o);
        if (auto u = p->usd(o)) {
            oc.usd_per_hour = *u * units;
            oc.usd_per_million_tokens = *oc.usd_per_hour / (wall_tokens_per_s * 3600) * 1e6;
            if (token_budget > 0) {
                oc.usd_total = *oc.usd_per_hour * hours;
                const Goodput& g = o == PriceOption::spot ? c.goodput_spot : c.goodput;
                oc.effective_time_s = g.effective_time_s;
                oc.usd_total_with_failures = *oc.usd_per_hour * g.effective_time_s / 3600;
                oc.usd_outlay = oc.usd_total_with_failures;
                if (auto term = commitment_term_hours(o)) {
                    const double used_h = g.effective_time_s / 3600;
                    oc.term_hours = *term;
                    oc.terms = std::max(1, static_cast<int>(std::ceil(used_h / *term - 1e-9)));
                    oc.usd_commitment = *oc.usd_per_hour * *term * oc.terms;
                    oc.run_share_of_commitment = used_h / (*term * oc.terms);
                    oc.usd_outlay = oc.usd_commitment;
                }
            }
        }
        c.options.push_back(oc);
    }
    // Recovery strategies at on-demand prices; spare hosts are paid for the whole run beside the job's.
    if (const OptionCost* od = find_option(c, PriceOption::on_demand); od && od->usd_per_hour)
        for (auto& rc : c.recovery)
            if (rc.option.applicable)
                rc.usd_on_demand_with_failures = *od->usd_per_hour * (1 + rc.option.spare_hosts / sys.hosts()) *
                                                 rc.option.effective_time_s / 3600;
    check_costs(c);
    return c;
}

}  // namespace podsim
