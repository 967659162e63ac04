#include "reports/sweep_report.hpp"

#include <map>

#include <fmt/format.h>

#include "models/result_checks.hpp"

#include "reports/json_parts.hpp"
#include "reports/search_report.hpp"

namespace podsim {

namespace {

// Why a point has no plan: the most common rejection over its systems, with one example sentence.
std::string why_no_plan(const SearchResult& r) {
    std::map<Reject, size_t> count;
    std::map<Reject, std::string> example;
    for (const auto& ss : r.systems)
        for (const auto& [why, n] : ss.rejected) {
            count[why] += n;
            if (example[why].empty() && ss.example.count(why)) example[why] = ss.example.at(why);
        }
    Reject top = Reject::none;
    size_t most = 0;
    for (const auto& [why, n] : count)
        if (n > most) top = why, most = n;
    if (most == 0) return r.plans == 0 ? "no plan in the search space" : "no feasible plan";
    return fmt::format("{} of {} plans rejected ({}), e.g. {}", most, r.plans, to_string(top), example[top]);
}

// The CSV's columns: a fixed set, whatever the point's outcome (status ok / infeasible; reason says why).
const std::vector<const char*>& fixed_columns() {
    static const std::vector<const char*> c = {
        "system_label", "chips", "chip", "params", "global_batch_seqs", "token_budget_tokens", "price_option",
        "plans_searched", "plans_feasible", "status", "reason", "best_plan", "step_time_s", "mfu_fraction",
        "tokens_per_s", "memory_per_device_gib", "days_no_failures", "days_with_failures", "usd_with_failures",
        "usd_outlay", "deadline_plan", "deadline_days", "deadline_usd_outlay", "budget_plan", "budget_days",
        "budget_usd_outlay", "advice_note"};
    return c;
}

// One row's cells, in the CSV column order.
std::vector<std::string> cells(const SweepRow& r) {
    const Scenario& s = r.point->scenario;
    std::vector<std::string> c;
    for (const auto& [_, v] : r.point->axes) c.push_back(v);
    c.push_back(s.system.label);
    c.push_back(std::to_string(s.system.chips));
    c.push_back(s.system.chip.name);
    c.push_back(fmt::format("{:.4g}", s.model.total_params()));
    c.push_back(std::to_string(s.plan.global_batch));
    c.push_back(fmt::format("{:g}", s.token_budget));
    c.push_back(price_option_key(r.point->price));
    c.push_back(std::to_string(r.search.plans));
    c.push_back(std::to_string(r.search.feasible));
    if (r.search.ranked.empty()) {
        c.push_back("infeasible");
        c.push_back(why_no_plan(r.search));
        while (c.size() < r.point->axes.size() + fixed_columns().size()) c.push_back("");
        return c;
    }
    c.push_back("ok");
    c.push_back("");
    const RankedPlan& b = r.search.ranked.front();
    c.push_back(describe_plan(b.plan));
    c.push_back(fmt::format("{:.4f}", b.step.step_time_s));
    c.push_back(fmt::format("{:.4f}", b.step.mfu));
    c.push_back(fmt::format("{:.0f}", b.step.tokens_per_s));
    c.push_back(fmt::format("{:.2f}", b.step.memory.total_bytes / (1024.0 * 1024 * 1024)));
    const OptionCost* oc = find_option(b.cost, r.point->price);
    c.push_back(b.cost.time_to_train_s > 0 ? fmt::format("{:.2f}", b.cost.time_to_train_s / 86400) : "");
    c.push_back(oc && oc->effective_time_s > 0 ? fmt::format("{:.2f}", oc->effective_time_s / 86400) : "");
    c.push_back(oc && oc->usd_total_with_failures ? fmt::format("{:.0f}", *oc->usd_total_with_failures) : "");
    c.push_back(oc && oc->usd_outlay ? fmt::format("{:.0f}", *oc->usd_outlay) : "");  // a commitment's whole terms
    // sweep --deadline-days / --budget-usd: the cheapest plan within the deadline, the fastest within the budget.
    for (const std::optional<size_t>& pick : {r.search.cheapest_within_deadline, r.search.fastest_within_budget}) {
        const OptionCost* a = pick ? find_option(r.search.ranked[*pick].cost, r.point->price) : nullptr;
        c.push_back(pick ? describe_plan(r.search.ranked[*pick].plan) : "");
        c.push_back(a && a->effective_time_s > 0 ? fmt::format("{:.2f}", a->effective_time_s / 86400) : "");
        c.push_back(a && a->usd_outlay ? fmt::format("{:.0f}", *a->usd_outlay) : "");
    }
    c.push_back(r.search.advice_note);
    return c;
}

std::string csv_escape(const std::string& v) {
    if (v.find_first_of(",\"\r\n") == std::string::npos) return v;
    std::string o = "\"";
    for (char ch : v) o += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return o + "\"";
}

}  // namespace

std::string sweep_csv_header(const Sweep& s) {
    std::string o;
    for (size_t i = 0; i < s.axis_names.size(); ++i) o += (i ? "," : "") + std::string("axis_") + s.axis_names[i];
    for (const char* h : fixed_columns()) o += (o.empty() ? "" : ",") + std::string(h);
    return o + "\n";
}

std::string sweep_csv_row(const Sweep& s, const SweepRow& r) {
    const auto c = cells(r);
    const size_t fields = s.axis_names.size() + fixed_columns().size();
    if (c.size() != fields)  // a row must have the header's fields, or CSV readers reject the file
        throw InternalError(fmt::format("sweep CSV row has {} fields, the header {}", c.size(), fields));
    std::string o;
    for (size_t i = 0; i < c.size(); ++i) {
        if (i) o += ',';
        o += csv_escape(c[i]);
    }
    return o + "\n";
}

std::string sweep_csv(const Sweep& s, const std::vector<SweepRow>& rows) {
    std::string o = sweep_csv_header(s);
    for (const auto& r : rows) o += sweep_csv_row(s, r);
    return o;
}

nlohmann::json sweep_json_head(const Sweep& s) {
    nlohmann::json j = output_head("sweep");
    j["sweep"] = {{"name", s.name}, {"file", s.file}};
    j["objective"] = to_string(s.objective);
    j["axes"] = s.axis_names;
    j["points"] = nlohmann::json::array();
    return j;
}

nlohmann::json sweep_point_json(const SweepRow& r) {
    auto plan_or_null = [](const SearchResult& sr, const std::optional<size_t>& i, PriceOption price) {
        return i ? ranked_plan_json(sr.ranked[*i], price) : nlohmann::json(nullptr);
    };
    nlohmann::json p;
    p["axes"] = nlohmann::json::object();
    for (const auto& [k, v] : r.point->axes) p["axes"][k] = v;
    p["system"] = system_json(r.point->scenario.system);
    p["params"] = r.point->scenario.model.total_params();
    p["global_batch_seqs"] = r.point->scenario.plan.global_batch;
    p["token_budget"] = r.point->scenario.token_budget;
    p["price_option"] = price_option_key(r.point->price);
    p["plans"] = r.search.plans;
    p["feasible"] = r.search.feasible;
    const bool none = r.search.ranked.empty();
    p["best"] = none ? nlohmann::json(nullptr) : ranked_plan_json(r.search.ranked.front(), r.point->price);
    p["why_none"] = none ? nlohmann::json(why_no_plan(r.search)) : nlohmann::json(nullptr);
    p["cheapest_within_deadline"] = plan_or_null(r.search, r.search.cheapest_within_deadline, r.point->price);
    p["fastest_within_budget"] = plan_or_null(r.search, r.search.fastest_within_budget, r.point->price);
    p["advice_note"] = r.search.advice_note.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.search.advice_note);
    return p;
}

nlohmann::json sweep_json(const Sweep& s, const std::vector<SweepRow>& rows) {
    nlohmann::json j = sweep_json_head(s);
    for (const auto& r : rows) j["points"].push_back(sweep_point_json(r));
    return j;
}

}  // namespace podsim
