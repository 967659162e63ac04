#include "reports/search_report.hpp"

#include <fmt/format.h>

#include "reports/format.hpp"
#include "reports/json_parts.hpp"

namespace podsim {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

const OptionCost* chosen(const RankedPlan& p, PriceOption price) { return find_option(p.cost, price); }

std::string dollars_cell(const RankedPlan& p, PriceOption price) {
    const OptionCost* oc = chosen(p, price);
    if (!oc || !oc->usd_outlay) return oc && oc->usd_per_million_tokens ? money(*oc->usd_per_million_tokens) + "/Mtok" : "-";
    // A commitment costs its whole term: that, with the run's share beside it.
    if (oc->usd_commitment)
        return money(*oc->usd_commitment) + " (run " + money(*oc->usd_total_with_failures) + ")";
    return money(*oc->usd_outlay);
}

std::string days_cell(const RankedPlan& p, PriceOption price) {
    const OptionCost* oc = chosen(p, price);
    if (oc && oc->effective_time_s > 0) return fmt::format("{:.1f}", oc->effective_time_s / 86400);
    return p.cost.time_to_train_s > 0 ? fmt::format("{:.1f}", p.cost.time_to_train_s / 86400) : "-";
}

std::string reject_name(Reject r) {
    switch (r) {
        case Reject::memory: return "over HBM";
        case Reject::placement: return "not placeable on the topology";
        case Reject::split: return "split does not divide the model";
        case Reject::none: return "";
    }
    return "";
}

}  // namespace

std::string search_text(const Scenario& s, const SearchResult& r, int top) {
    std::string o;
    o += fmt::format("podsim search: {}\n", s.name);
    o += fmt::format("  model {} ({:.1f}B parameters), global batch {} x {} tokens, objective: {}, price: {}\n",
                     s.model.name, s.model.total_params() / 1e9, s.plan.global_batch, s.model.seq_len,
                     to_string(r.objective), to_string(r.price));
    o += fmt::format("  searched {} plans in {} ({:.0f} plans/s, closed-form screening); {} fit; the best {} "
                     "re-simulated with the event engine in {}{}\n",
                     r.plans, elapsed(r.screen_s), r.plans / std::max(r.screen_s, 1e-9), r.feasible, r.confirmed,
                     elapsed(r.confirm_s), r.refined > 0 ? ", SimGrid refinement " + elapsed(r.refine_s) : "");
    for (const auto& ss : r.systems) {
        o += fmt::format("  {} ({} chips): {} plans, {} fit", ss.label, ss.chips, ss.plans, ss.feasible);
        for (const auto& [why, n] : ss.rejected) o += fmt::format(", {} {}", n, reject_name(why));
        o += "\n";
        for (const auto& [why, ex] : ss.example) o += fmt::format("      e.g. {}\n", ex);
    }
    for (const auto& k : r.skipped_scales) o += "  skipped " + k + "\n";
    if (r.ranked.empty()) {
        o += "\n  NO FEASIBLE PLAN: every plan was dropped (reasons above)\n";
        return o;
    }
    // Commitments: the whole term's cost, with the run's share beside it.
    const bool term = commitment_term_hours(r.price).has_value();
    const int money_w = term ? 24 : 10;
    o += fmt::format("\n  {:>3} {:<22} {:<66} {:>9} {:>6} {:>7} {:>7} {:>7} {:>8} {:>7} {:>{}}\n", "#", "system", "plan",
                     "step s", "MFU%", "comp%", "comm%", "bubble%", "mem GiB", "days", term ? "$ term (run)" : "$ total",
                     money_w);
    const int n = std::min<int>(top, static_cast<int>(r.ranked.size()));
    for (int i = 0; i < n; ++i) {
        const RankedPlan& p = r.ranked[i];
        const auto& b = p.step.breakdown;
        const double t = p.step.step_time_s;
        o += fmt::format("  {:>3} {:<22} {:<66} {:>9.3f} {:>6.1f} {:>7.1f} {:>7.1f} {:>7.1f} {:>8.1f} {:>7} {:>{}}\n", i + 1,
                         p.system.label, describe_plan(p.plan), t, 100 * p.step.mfu, 100 * b.compute_s / t,
                         100 * b.exposed_comm_s / t, 100 * b.bubble_s / t, p.step.memory.total_bytes / kGiB,
                         days_cell(p, r.price), dollars_cell(p, r.price), money_w);
        if (!p.equivalents.empty())
            o += fmt::format("      same figures: {}{}\n", p.equivalents.front(),
                             p.equivalents.size() > 1 ? fmt::format(" and {} more", p.equivalents.size() - 1) : "");
        if (p.simgrid_step_s)
            o += fmt::format("      SimGrid (links shared by every group instance): {:.3f} s ({:+.1f}% vs analytical)\n",
                             *p.simgrid_step_s, 100 * (*p.simgrid_step_s / t - 1));
    }
    if (n > 0 && !r.ranked.front().step.networks.empty()) {
        // Where the best plan's parallel groups sit (NVLink inside a node or across VMs of one NVLink domain, the
        // NICs, ICI, DCN): the placement its time was priced on.
        std::string where;
        for (const auto& u : r.ranked.front().step.networks)
            where += fmt::format("{}{} {} over {} ({})", where.empty() ? "" : "; ", u.group, u.size, u.path, u.algorithm);
        o += fmt::format("  #1's groups: {}\n", where);
        // On a multi-VM NVLink domain (NVL72) say where TP landed: its overlap and bandwidth depend on it.
        const RankedPlan& best = r.ranked.front();
        const SystemSpec& s = best.system;
        if (s.is_gpu && s.domain_gpus() > s.node.gpus_per_node)
            for (const auto& u : best.step.networks)
                if (u.group == "tp")
                    o += u.in_one_nvlink_domain
                             ? fmt::format("  #1's TP group ({} GPUs) sits inside one NVLink domain of {} GPUs ({} VMs "
                                           "of {}): NVLink bandwidth, TP overlap possible\n",
                                           u.size, s.domain_gpus(), s.domain_gpus() / s.node.gpus_per_node,
                                           s.node.gpus_per_node)
                             : fmt::format("  #1's TP group ({} GPUs) spans NVLink domains of {} GPUs: its traffic "
                                           "crosses the NICs, and TP overlap is off\n",
                                           u.size, s.domain_gpus());
    }
    if (!r.ranked.empty() && r.ranked.front().step.input && r.ranked.front().step.breakdown.input_wait_s > 0)
        o += fmt::format("  INPUT-BOUND: every plan waits for its data; the input pipeline takes {} a step per host "
                         "(bottleneck: {})\n",
                         elapsed(r.ranked.front().step.input->per_step_s), r.ranked.front().step.input->bottleneck);
    o += "  (step, MFU, breakdown and memory from the event engine; days and $ to train the token budget at the\n"
         "   chosen price, failures and restarts included; MFU convention: " + std::string(kMfuConvention) + ")\n";
    if (term)
        o += fmt::format("  a {} is paid for every hour of its term ({:g} h), used or not: the $ column is the whole\n"
                         "   term(s) the run needs, the run's own share in parentheses; advice and the Pareto front use the\n"
                         "   whole term\n",
                         to_string(r.price), *commitment_term_hours(r.price));
    if (!r.pareto.empty()) {
        o += fmt::format("\n  Pareto front, time to train vs dollars ({}):\n", to_string(r.price));
        for (size_t i : r.pareto) {
            const RankedPlan& p = r.ranked[i];
            o += fmt::format("    {:>7} days  {:>10}  {:<22} {}\n", days_cell(p, r.price), dollars_cell(p, r.price),
                             p.system.label, describe_plan(p.plan));
        }
    }
    if (r.cheapest_within_deadline) {
        const RankedPlan& p = r.ranked[*r.cheapest_within_deadline];
        o += fmt::format("\n  cheapest within the deadline: {} days, {} on {} with {}\n", days_cell(p, r.price),
                         dollars_cell(p, r.price), p.system.label, describe_plan(p.plan));
    }
    if (r.fastest_within_budget) {
        const RankedPlan& p = r.ranked[*r.fastest_within_budget];
        o += fmt::format("  fastest within the budget: {} days, {} on {} with {}\n", days_cell(p, r.price),
                         dollars_cell(p, r.price), p.system.label, describe_plan(p.plan));
    }
    if (!r.advice_note.empty()) o += "  note: " + r.advice_note + "\n";
    return o;
}

nlohmann::json search_json(const Scenario& s, const SearchResult& r, int top) {
    nlohmann::json j = output_head("search");
    j["scenario"] = scenario_ref_json(s);
    j["objective"] = to_string(r.objective);
    j["price_option"] = price_option_key(r.price);
    j["plans"] = r.plans;
    j["feasible"] = r.feasible;
    j["screen_s"] = r.screen_s;
    j["plans_per_s"] = r.plans / std::max(r.screen_s, 1e-9);
    j["systems"] = nlohmann::json::array();
    for (const auto& ss : r.systems) {
        nlohmann::json x{{"label", ss.label}, {"chips", ss.chips}, {"plans", ss.plans}, {"feasible", ss.feasible}};
        x["rejected"] = nlohmann::json::object();
        for (const auto& [why, n] : ss.rejected) x["rejected"][to_string(why)] = {{"count", n}, {"example", ss.example.at(why)}};
        j["systems"].push_back(x);
    }
    j["skipped_scales"] = r.skipped_scales;
    j["ranked"] = nlohmann::json::array();
    for (int i = 0; i < std::min<int>(top, static_cast<int>(r.ranked.size())); ++i)
        j["ranked"].push_back(ranked_plan_json(r.ranked[i], r.price));
    j["pareto"] = nlohmann::json::array();
    for (size_t i : r.pareto) j["pareto"].push_back(ranked_plan_json(r.ranked[i], r.price));
    j["cheapest_within_deadline"] = r.cheapest_within_deadline
                                        ? ranked_plan_json(r.ranked[*r.cheapest_within_deadline], r.price)
                                        : nlohmann::json(nullptr);
    j["fastest_within_budget"] = r.fastest_within_budget ? ranked_plan_json(r.ranked[*r.fastest_within_budget], r.price)
                                                         : nlohmann::json(nullptr);
    j["advice_note"] = r.advice_note.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.advice_note);
    return j;
}

}  // namespace podsim
