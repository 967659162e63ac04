#include "reports/sweep_report.hpp"

#include <fmt/format.h>

#include "reports/search_report.hpp"

namespace podsim {

namespace {

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
    c.push_back(to_string(r.point->price));
    c.push_back(std::to_string(r.search.plans));
    c.push_back(std::to_string(r.search.feasible));
    if (r.search.ranked.empty()) {
        c.push_back("no feasible plan");
        for (int i = 0; i < 8; ++i) c.push_back("");
        return c;
    }
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
    return c;
}

std::string csv_escape(const std::string& v) {
    if (v.find_first_of(",\"\n") == std::string::npos) return v;
    std::string o = "\"";
    for (char ch : v) o += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return o + "\"";
}

}  // namespace

std::string sweep_csv(const Sweep& s, const std::vector<SweepRow>& rows) {
    std::vector<std::string> head;
    for (const auto& a : s.axis_names) head.push_back("axis_" + a);
    for (const char* h : {"system_label", "chips", "chip", "params", "global_batch_seqs", "token_budget", "price_option",
                          "plans", "feasible", "best_plan", "step_time_s", "mfu", "tokens_per_s", "memory_gib",
                          "days_no_failures", "days_with_failures", "usd_with_failures"})
        head.push_back(h);
    std::string o;
    for (size_t i = 0; i < head.size(); ++i) o += (i ? "," : "") + head[i];
    o += "\n";
    for (const auto& r : rows) {
        const auto c = cells(r);
        for (size_t i = 0; i < c.size(); ++i) {
            if (i) o += ',';
            o += csv_escape(c[i]);
        }
        o += "\n";
    }
    return o;
}

nlohmann::json sweep_json(const Sweep& s, const std::vector<SweepRow>& rows) {
    nlohmann::json j;
    j["sweep"] = s.file;
    j["name"] = s.name;
    j["objective"] = to_string(s.objective);
    j["axes"] = s.axis_names;
    j["points"] = nlohmann::json::array();
    for (const auto& r : rows) {
        nlohmann::json p;
        for (const auto& [k, v] : r.point->axes) p["axes"][k] = v;
        p["system"] = r.point->scenario.system.label;
        p["chips"] = r.point->scenario.system.chips;
        p["params"] = r.point->scenario.model.total_params();
        p["global_batch_seqs"] = r.point->scenario.plan.global_batch;
        p["token_budget"] = r.point->scenario.token_budget;
        p["price_option"] = to_string(r.point->price);
        p["plans"] = r.search.plans;
        p["feasible"] = r.search.feasible;
        if (r.search.ranked.empty()) {
            p["best"] = nullptr;
            std::string why;
            for (const auto& ss : r.search.systems)
                for (const auto& [_, ex] : ss.example) why += (why.empty() ? "" : " | ") + ex;
            p["why_none"] = why;
        } else {
            p["best"] = ranked_plan_json(r.search.ranked.front(), r.point->price);
        }
        j["points"].push_back(p);
    }
    return j;
}

}  // namespace podsim
