#include "reports/report.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "hardware/catalog.hpp"
#include "reports/format.hpp"
#include "reports/markdown_html.hpp"
#include "reports/provision.hpp"
#include "reports/svg.hpp"

namespace podsim {

namespace {

const std::vector<svg::Category> kStepParts = {
    {"compute", "#1f77b4"}, {"exposed communication", "#ff7f0e"}, {"pipeline bubble", "#c7c7c7"}, {"optimizer", "#9467bd"}};
const std::vector<svg::Category> kTimelineParts = {
    {"compute", "#1f77b4"}, {"exposed communication", "#ff7f0e"}, {"optimizer", "#9467bd"},
    {"p2p and gradient sync beside compute", "#2ca02c"},
    {"TP/CP/FSDP/EP collectives hidden under compute", "#17becf"}};
constexpr int kCategories = 5;

// The share of a pass's kernel time that its overlappable collectives (TP overlap, FSDP prefetch, CP ring, EP
// dispatch under another micro-batch) run beside, from one layer's priced ops: hidden communication per second of
// compute. The timeline draws it on the communication row under each forward/backward task.
double hidden_per_compute(const std::vector<OpTiming>& ops) {
    double kernels = 0, hidden = 0;
    for (const auto& o : ops) {
        if (o.kind != OpKind::collective) kernels += o.time_s;
        else if (o.overlappable) hidden += o.time_s;  // blocking collectives are the exposed part, already drawn
    }
    return kernels > 0 ? hidden / kernels : 0;
}

std::vector<double> parts(const StepBreakdown& b) { return {b.compute_s, b.exposed_comm_s, b.bubble_s, b.optimizer_s}; }

// The stages that stand for the device classes of a pipeline: the first (embedding), a middle one, the last (head).
std::vector<int> device_classes(int stages) {
    std::vector<int> s = {0};
    if (stages > 2) s.push_back(stages / 2);
    if (stages > 1) s.push_back(stages - 1);
    return s;
}

// The step's timeline reduced to display resolution: per device class a compute row and a communication row, each
// cut into `bins` columns coloured by what fills most of the column (idle when less than half is busy).
std::vector<svg::GanttRow> timeline_rows(const StepResult& r, int stages) {
    constexpr int bins = 700;
    const double T = r.step_time_s, w = T / bins;
    std::vector<svg::GanttRow> rows;
    for (int st : device_classes(stages)) {
        using Bin = std::array<double, kCategories>;
        std::vector<Bin> comp(bins, Bin{}), comm(bins, Bin{});
        const double hid_f = hidden_per_compute(r.layer_forward), hid_b = hidden_per_compute(r.layer_backward);
        auto add = [&](std::vector<Bin>& row, double a, double b, int cat) {
            if (b <= a) return;
            for (int i = std::max(0, static_cast<int>(a / w)); i < bins && i * w < b; ++i)
                row[i][cat] += std::max(0.0, std::min(b, (i + 1) * w) - std::max(a, i * w));
        };
        for (const auto& s : r.timeline) {
            if (s.stage != st) continue;
            if (s.stream == "compute") {
                double t = s.start_s;
                add(comp, t, t + s.compute_s, 0), t += s.compute_s;
                add(comp, t, t + s.exposed_comm_s, 1), t += s.exposed_comm_s;
                add(comp, t, t + s.optimizer_s, 2);
                if (s.pass) {
                    const double hidden = std::min(s.compute_s * (s.pass == 'F' ? hid_f : hid_b), s.finish_s - s.start_s);
                    add(comm, s.start_s, s.start_s + hidden, 4);
                }
            } else {
                add(comm, s.start_s, s.finish_s, 3);
            }
        }
        for (auto* row : {&comp, &comm}) {
            svg::GanttRow g;
            g.name = fmt::format("stage {}{} {}", st, st == 0 ? " (first)" : st == stages - 1 && stages > 1 ? " (last)" : "",
                                 row == &comp ? "compute" : "comm");
            if (stages == 1) g.name = row == &comp ? "every device: compute" : "every device: comm";
            for (int i = 0; i < bins; ++i) {
                const auto& b = (*row)[i];
                const int cat = static_cast<int>(std::max_element(b.begin(), b.end()) - b.begin());
                double busy = 0;
                for (double x : b) busy += x;
                // Compute: a column is coloured when mostly busy. Communication beside compute comes in bursts
                // shorter than a column (a layer's TP collectives are a few per cent of it), so its row shows any
                // column it is in for 5% or more.
                if (busy < (row == &comp ? 0.5 : 0.05) * w) continue;
                if (!g.segments.empty() && g.segments.back().category == cat && g.segments.back().end >= i * w - 1e-12)
                    g.segments.back().end = (i + 1) * w;
                else
                    g.segments.push_back({i * w, (i + 1) * w, cat});
            }
            rows.push_back(std::move(g));
        }
    }
    return rows;
}


}  // namespace

std::map<std::string, std::string> report_charts(const Report& r) {
    std::map<std::string, std::string> c;
    const Scenario& s = r.scenario;
    // Where the time goes.
    {
        std::vector<std::string> labels;
        std::vector<std::vector<double>> values;
        if (r.scenario_step.feasible) labels.push_back("scenario plan"), values.push_back(parts(r.scenario_step.breakdown));
        if (r.best_step) labels.push_back("best plan found"), values.push_back(parts(r.best_step->breakdown));
        c["breakdown"] = svg::stacked_bars("breakdown", "Where one training step's time goes", labels, values, kStepParts,
                                           "seconds per step (critical pipeline stage)");
    }
    // One step's timeline per device class.
    if (r.scenario_step.feasible)
        c["timeline-scenario"] = svg::gantt("timeline-scenario",
                                            "One step of the scenario's plan, per device class (" + describe_plan(s.plan) + ")",
                                            timeline_rows(r.scenario_step, s.plan.pp), kTimelineParts,
                                            r.scenario_step.step_time_s, "seconds");
    if (r.best_step)
        c["timeline-best"] = svg::gantt("timeline-best",
                                        "One step of the best plan found, per device class (" +
                                            describe_plan(r.strategies.ranked.front().plan) + ")",
                                        timeline_rows(*r.best_step, r.strategies.ranked.front().plan.pp), kTimelineParts,
                                        r.best_step->step_time_s, "seconds");
    // Strategies compared.
    {
        std::vector<std::string> labels;
        std::vector<std::vector<double>> values;
        const int n = std::min<int>(r.options.top, static_cast<int>(r.strategies.ranked.size()));
        for (int i = 0; i < n; ++i) {
            labels.push_back(fmt::format("#{} {}", i + 1, short_plan(r.strategies.ranked[i].plan)));
            values.push_back(parts(r.strategies.ranked[i].step.breakdown));
        }
        if (!labels.empty())
            c["strategies"] = svg::stacked_bars("strategies", "Top strategies on " + s.system.label + " (ranked by " +
                                                                  to_string(r.options.objective) + ")",
                                                labels, values, kStepParts, "seconds per step");
    }
    // Time vs cost.
    {
        std::vector<svg::Point> pts;
        for (size_t i = 0; i < r.scaling.ranked.size(); ++i) {
            const auto& rp = r.scaling.ranked[i];
            const OptionCost* oc = find_option(rp.cost, r.options.price);
            if (!oc || !oc->usd_total_with_failures || oc->effective_time_s <= 0) continue;
            const bool front = std::find(r.scaling.pareto.begin(), r.scaling.pareto.end(), i) != r.scaling.pareto.end();
            pts.push_back({oc->effective_time_s / 86400, *oc->usd_total_with_failures / 1e6,
                           fmt::format("{}: {} ({:.1f} days, {})", rp.system.label, describe_plan(rp.plan),
                                       oc->effective_time_s / 86400, money(*oc->usd_total_with_failures)),
                           front,
                           fmt::format("{} {}, {:.1f} d, {}", rp.system.label, short_plan(rp.plan),
                                       oc->effective_time_s / 86400, money(*oc->usd_total_with_failures))});
        }
        if (!pts.empty())
            c["pareto"] = svg::scatter("pareto",
                                       std::string("Time to train vs dollars (") + to_string(r.options.price) +
                                           ", failures included); red: Pareto front",
                                       pts, "days to train the token budget", "million USD");
    }
    // Scaling over chip counts: the best plan at each size against linear scaling from the smallest.
    {
        std::map<int, double> best;
        for (const auto& rp : r.scaling.ranked) best[rp.system.chips] = std::max(best[rp.system.chips], rp.step.tokens_per_s);
        if (best.size() >= 2) {
            svg::Line got{"best plan found", "#1f77b4", {}, {}, false}, ideal{"linear scaling", "#7f7f7f", {}, {}, true};
            const auto first = *best.begin();
            for (const auto& [chips, tps] : best) {
                got.x.push_back(chips), got.y.push_back(tps / 1e3);
                ideal.x.push_back(chips), ideal.y.push_back(first.second / 1e3 * chips / first.first);
            }
            c["scaling"] = svg::line_chart("scaling", "Throughput over chip counts (" + std::string(s.system.chip.name) + ")",
                                           {got, ideal}, "chips", "thousand tokens per second");
        }
    }
    return c;
}

namespace {

// The report's content as (heading, paragraphs/tables in Markdown) so both renderings share it.
struct Section {
    std::string title;
    std::string markdown;
    std::vector<std::string> charts;  // chart ids shown after the text
};

std::string md_table(const std::vector<std::string>& head, const std::vector<std::vector<std::string>>& rows) {
    std::string o = "|";
    for (const auto& h : head) o += " " + h + " |";
    o += "\n|";
    for (size_t i = 0; i < head.size(); ++i) o += i == 0 ? "---|" : "---:|";
    o += "\n";
    for (const auto& r : rows) {
        o += "|";
        for (const auto& c : r) o += " " + c + " |";
        o += "\n";
    }
    return o;
}

// A text with paths of podsim's tree in it, as a shared document shows it: relative to the tree (no directory of the
// machine the report was made on).
std::string local_paths_out(const std::string& text) {
    std::string dir = default_catalog_dir();
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    const std::string root = std::filesystem::path(dir).lexically_normal().parent_path().parent_path().string();
    std::string t = without_dir(text, root + "/");
    for (auto at = t.find("catalog/../"); at != std::string::npos; at = t.find("catalog/../")) t.erase(at, 11);
    return t;
}

std::string pct(double x, double of) { return of > 0 ? fmt::format("{:.1f}%", 100 * x / of) : "-"; }

// The decision first (issue #14): across the sizes searched, the fastest and the cheapest plans for the token
// budget at the report's price option, failures included, and those that meet the brief (--deadline-days,
// --budget-usd), each with podsim's error band on published runs beside its days and dollars.
std::string decision_markdown(const Report& r) {
    const Scenario& s = r.scenario;
    const auto& sc = r.scaling;
    const PriceOption price = r.options.price;
    const double band = r.band ? r.band->typical_pct / 100 : 0;
    auto days_of = [&](const RankedPlan& p) {
        const OptionCost* oc = find_option(p.cost, price);
        return (oc && oc->effective_time_s > 0 ? oc->effective_time_s : p.cost.goodput.effective_time_s) / 86400;
    };
    auto usd_of = [&](const RankedPlan& p) -> std::optional<double> {
        const OptionCost* oc = find_option(p.cost, price);
        return oc ? oc->usd_outlay : std::nullopt;
    };
    std::string m;
    if (s.token_budget <= 0 || sc.ranked.empty()) {
        m += sc.ranked.empty() ? "No feasible plan was found at the sizes searched"
                               : "The scenario states no token budget, so there is no time to train or cost to decide on";
        m += r.best_step ? "; see the best plan per step below.\n" : ".\n";
        return m;
    }
    const RankedPlan* fastest = nullptr;
    const RankedPlan* cheapest = nullptr;
    for (const auto& p : sc.ranked) {
        if (!fastest || days_of(p) < days_of(*fastest)) fastest = &p;
        const auto u = usd_of(p);
        if (u && (!cheapest || *u < *usd_of(*cheapest))) cheapest = &p;
    }
    auto days_cell = [&](const RankedPlan& p) {
        const double d = days_of(p);
        return band > 0 ? fmt::format("{:.1f} (±{:.1f})", d, d * band) : fmt::format("{:.1f}", d);
    };
    auto usd_cell = [&](const RankedPlan& p) {
        const auto u = usd_of(p);
        if (!u) return std::string("no price");
        return band > 0 ? money(*u) + " (±" + money(*u * band) + ")" : money(*u);
    };
    std::vector<std::vector<std::string>> rows;
    auto row = [&](const std::string& what, const RankedPlan& p) {
        rows.push_back({what, fmt::format("{} ({} chips)", p.system.label, p.system.chips), describe_plan(p.plan),
                        days_cell(p), usd_cell(p), fmt::format("{:.1f}%", 100 * p.step.mfu)});
    };
    const RankedPlan* pick = nullptr;  // what the decision recommends
    std::string why;
    if (r.options.deadline_days) {
        if (sc.cheapest_within_deadline) {
            pick = &sc.ranked[*sc.cheapest_within_deadline];
            row(fmt::format("**cheapest within {:g} days**", *r.options.deadline_days), *pick);
            why = fmt::format("the cheapest plan that trains the budget within {:g} days", *r.options.deadline_days);
        } else {
            m += fmt::format("**Nothing searched meets {:g} days** (sizes {}x the scenario's); the fastest takes {:.1f} "
                             "days.\n\n", *r.options.deadline_days, fmt::join(r.options.scales, "x, "), days_of(*fastest));
        }
    }
    if (r.options.budget_usd) {
        if (sc.fastest_within_budget) {
            const RankedPlan& p = sc.ranked[*sc.fastest_within_budget];
            row("**fastest within " + money(*r.options.budget_usd) + "**", p);
            if (!pick) pick = &p, why = "the fastest plan within " + money(*r.options.budget_usd);
        } else {
            m += "**Nothing searched fits " + money(*r.options.budget_usd) + "**" +
                 (cheapest ? "; the cheapest costs " + money(*usd_of(*cheapest)) : std::string()) + ".\n\n";
        }
    }
    row("fastest", *fastest);
    if (cheapest && cheapest != fastest) row("cheapest", *cheapest);
    if (!pick) {
        pick = cheapest ? cheapest : fastest;
        why = cheapest == fastest ? "both the fastest and the cheapest of the sizes searched"
              : cheapest         ? "the cheapest of the sizes searched"
                                 : "the fastest (no prices to compare)";
    }
    m += fmt::format("**Provision {} ({} chips) with {}**: {}; {:.1f} days{} for {} tokens ({} prices, failures "
                     "and restarts included).\n\n",
                     pick->system.label, pick->system.chips, describe_plan(pick->plan), why, days_of(*pick),
                     usd_of(*pick) ? ", " + money(*usd_of(*pick)) : std::string(), large_count(s.token_budget), to_string(price));
    if (cheapest && cheapest != fastest) {
        const double dd = days_of(*cheapest) - days_of(*fastest);
        m += fmt::format("The fastest plan saves {:.1f} days for {} more.\n\n", dd,
                         money(*usd_of(*fastest) - *usd_of(*cheapest)));
    }
    if (r.scenario_step.feasible && r.scenario_cost.time_to_train_s > 0) {
        const OptionCost* oc = find_option(r.scenario_cost, price);
        rows.push_back({"the scenario's plan", fmt::format("{} ({} chips)", s.system.label, s.system.chips),
                        describe_plan(s.plan),
                        fmt::format("{:.1f}", (oc && oc->effective_time_s > 0 ? oc->effective_time_s
                                                                              : r.scenario_cost.goodput.effective_time_s) /
                                                  86400),
                        oc && oc->usd_outlay ? money(*oc->usd_outlay) : "no price",
                        fmt::format("{:.1f}%", 100 * r.scenario_step.mfu)});
    }
    m += md_table({"", "system", "plan", "days to train", std::string("cost (") + to_string(price) + ")", "MFU"}, rows);
    if (r.band)
        m += fmt::format("\nError band: ±{:.1f}% on days and dollars, {}. The days include failures and restarts at "
                         "the catalog's rates; dollars are {}{}.\n",
                         r.band->typical_pct, r.band->basis, to_string(price),
                         commitment_term_hours(price) ? " for the commitment's whole term" : " for the run's hours");
    return m;
}

std::vector<Section> sections(const Report& r) {
    const Scenario& s = r.scenario;
    const StepResult& st = r.scenario_step;
    std::vector<Section> out;
    {
        Section sec{"Decision", "", {}};
        sec.markdown = decision_markdown(r);
        out.push_back(sec);
    }
    {
        Section sec{"Summary", "", {}};
        std::string& m = sec.markdown;
        m += fmt::format("**Model**: {} ({:.1f}B parameters, {} layers, hidden {}, sequence {}); **system**: {} ({} x {}); "
                         "**global batch**: {} sequences",
                         s.model.name, s.model.total_params() / 1e9, s.model.layers, s.model.hidden, s.model.seq_len,
                         s.system.label, s.system.chips, s.system.chip.name, s.plan.global_batch);
        if (s.token_budget > 0) m += "; **token budget**: " + large_count(s.token_budget) + " tokens";
        m += ".\n\n";
        if (!s.description.empty()) m += s.description + "\n\n";
        if (!s.plan_choices.empty()) {
            std::string c;
            for (const auto& x : s.plan_choices) c += (c.empty() ? "" : ", ") + x;
            m += "The scenario leaves part of its plan out; podsim completed it with the best feasible step time "
                 "(software stack " + s.stack.id + "): " + c + ".\n\n";
        }
        std::vector<std::vector<std::string>> rows;
        auto row = [&](const std::string& name, const ParallelPlan& p, const StepResult& x, const CostReport& c) {
            const OptionCost* oc = find_option(c, r.options.price);
            rows.push_back({name, describe_plan(p), fmt::format("{:.3f} s", x.step_time_s), fmt::format("{:.1f}%", 100 * x.mfu),
                            c.time_to_train_s > 0 ? duration(c.goodput.effective_time_s) : "-",
                            oc && oc->usd_total_with_failures ? money(*oc->usd_total_with_failures) : "-",
                            fmt::format("{:.1f}%", 100 * c.goodput.goodput)});
        };
        if (st.feasible) row("scenario plan", s.plan, st, r.scenario_cost);
        if (r.best_step) row("best plan found", r.strategies.ranked.front().plan, *r.best_step, *r.best_cost);
        m += md_table({"", "plan", "step time", "MFU", "time to train (with failures)",
                       std::string("cost (") + to_string(r.options.price) + ", with failures)", "goodput"},
                      rows);
        if (!st.feasible) {
            m += "\n**The scenario's plan is impossible:**\n\n";
            for (const auto& why : st.infeasible) m += "- " + why + "\n";
        }
        if (st.feasible && r.best_step && r.best_step->step_time_s < st.step_time_s)
            m += fmt::format("\nThe best plan found is {:.0f}% faster per step than the scenario's.\n",
                             100 * (st.step_time_s / r.best_step->step_time_s - 1));
        m += fmt::format("\nMFU convention: {}. Peak: {}.\n", kMfuConvention, st.peak_name.empty() ? "-" : st.peak_name);
        sec.charts = {"breakdown"};
        out.push_back(sec);
    }
    {
        Section sec{"Where the time goes", "", {"timeline-scenario", "timeline-best"}};
        auto rows_for = [&](const StepResult& x) {
            const auto& b = x.breakdown;
            return std::vector<std::vector<std::string>>{
                {"compute", fmt::format("{:.3f}", b.compute_s), pct(b.compute_s, x.step_time_s)},
                {"exposed communication", fmt::format("{:.3f}", b.exposed_comm_s), pct(b.exposed_comm_s, x.step_time_s)},
                {"pipeline bubble", fmt::format("{:.3f}", b.bubble_s), pct(b.bubble_s, x.step_time_s)},
                {"optimizer", fmt::format("{:.3f}", b.optimizer_s), pct(b.optimizer_s, x.step_time_s)},
                {"step", fmt::format("{:.3f}", x.step_time_s), "100%"}};
        };
        if (st.feasible) {
            sec.markdown += "Scenario plan (" + describe_plan(s.plan) + "), critical pipeline stage:\n\n" +
                            md_table({"part", "seconds", "share"}, rows_for(st));
            std::vector<std::vector<std::string>> nets;
            for (const auto& n : st.networks) nets.push_back({n.group, std::to_string(n.size), n.path, n.algorithm});
            if (!nets.empty()) sec.markdown += "\n" + md_table({"group", "ranks", "network", "algorithm"}, nets);
            const auto& mem = st.memory;
            sec.markdown += fmt::format("\nMemory per device (busiest stage): {:.1f} of {:.1f} GiB (weights {:.1f}, master {:.1f}, "
                                        "gradients {:.1f}, optimizer {:.1f}, activations {:.1f}, transient {:.1f}, "
                                        "workspace {:.1f}).\n",
                                        mem.total_bytes / 1073741824.0, mem.hbm_bytes / 1073741824.0,
                                        mem.weights_bytes / 1073741824.0, mem.master_bytes / 1073741824.0,
                                        mem.gradients_bytes / 1073741824.0, mem.optimizer_bytes / 1073741824.0,
                                        mem.activations_bytes / 1073741824.0, mem.transient_bytes / 1073741824.0,
                                        mem.workspace_bytes / 1073741824.0);
        }
        if (r.best_step)
            sec.markdown += "\nBest plan found (" + describe_plan(r.strategies.ranked.front().plan) + "):\n\n" +
                            md_table({"part", "seconds", "share"}, rows_for(*r.best_step));
        if (st.feasible && st.input) {
            const InputTiming& in = *st.input;
            sec.markdown += fmt::format(
                "\nInput pipeline ({}): {} a step per host ({:.0f} sequences, {:.3g} MB from {}); bottleneck {}. {}\n",
                s.data->source, elapsed(in.per_step_s), in.samples_per_host, in.bytes_per_host / 1e6,
                s.data->storage.name, in.bottleneck,
                st.breakdown.input_wait_s > 0
                    ? fmt::format("**The step is input-bound: it waits {} for its data.**", elapsed(st.breakdown.input_wait_s))
                    : fmt::format("Hidden under the step ({:.1f}% of it).", 100 * in.per_step_s / st.step_time_s));
        }
        sec.markdown += "\nThe timelines below show one step per device class (first, middle and last pipeline stage): "
                        "blue compute, orange communication the stage waits for, purple the optimizer, green "
                        "communication running beside compute, grey idle (pipeline bubble and waits).\n";
        out.push_back(sec);
    }
    {
        Section sec{"Strategies compared", "", {"strategies"}};
        const auto& sr = r.strategies;
        sec.markdown += fmt::format("podsim searched {} plans on {} ({} fit in memory; closed-form screening at {:.0f} plans/s, "
                                    "the best {} re-simulated with the event engine).",
                                    sr.plans, s.system.label, sr.feasible, sr.plans / std::max(sr.screen_s, 1e-9), sr.confirmed);
        for (const auto& ss : sr.systems)
            for (const auto& [why, n] : ss.rejected)
                sec.markdown += fmt::format(" {} dropped ({}), e.g. {}.", n, to_string(why), ss.example.at(why));
        sec.markdown += "\n\n";
        std::vector<std::vector<std::string>> rows;
        for (int i = 0; i < std::min<int>(r.options.top, static_cast<int>(sr.ranked.size())); ++i) {
            const auto& p = sr.ranked[i];
            const OptionCost* oc = find_option(p.cost, r.options.price);
            rows.push_back({std::to_string(i + 1), describe_plan(p.plan), fmt::format("{:.3f}", p.step.step_time_s),
                            fmt::format("{:.1f}%", 100 * p.step.mfu),
                            pct(p.step.breakdown.exposed_comm_s, p.step.step_time_s),
                            pct(p.step.breakdown.bubble_s, p.step.step_time_s),
                            fmt::format("{:.1f}", p.step.memory.total_bytes / 1073741824.0),
                            oc && oc->usd_total_with_failures ? money(*oc->usd_total_with_failures) : "-"});
        }
        sec.markdown += md_table({"#", "plan", "step s", "MFU", "exposed comm", "bubble", "memory GiB", "cost"}, rows);
        out.push_back(sec);
    }
    {
        Section sec{"Time vs cost, and scaling", "", {"pareto", "scaling"}};
        const auto& sc = r.scaling;
        std::vector<std::vector<std::string>> rows;
        for (size_t i : sc.pareto) {
            const auto& p = sc.ranked[i];
            const OptionCost* oc = find_option(p.cost, r.options.price);
            rows.push_back({p.system.label, describe_plan(p.plan), fmt::format("{:.1f}", oc->effective_time_s / 86400),
                            money(*oc->usd_total_with_failures), fmt::format("{:.1f}%", 100 * p.step.mfu)});
        }
        if (!rows.empty())
            sec.markdown += std::string("Pareto front (") + to_string(r.options.price) + " prices, failures included):\n\n" +
                            md_table({"system", "plan", "days", "cost", "MFU"}, rows);
        else
            sec.markdown += "No Pareto front: " + (sc.advice_note.empty() ? std::string("no prices") : sc.advice_note) + ".\n";
        for (const auto& k : sc.skipped_scales) sec.markdown += "\nSkipped size " + k + ".";
        sec.markdown += "\n";
        out.push_back(sec);
    }
    {
        Section sec{"Cost and goodput per purchase option", "", {}};
        const CostReport& c = r.best_cost ? *r.best_cost : r.scenario_cost;
        sec.markdown += "For " + std::string(r.best_cost ? "the best plan found" : "the scenario's plan") + ".";
        if (!c.no_price_reason.empty()) sec.markdown += " " + c.no_price_reason + ".";
        sec.markdown += "\n\n";
        std::vector<std::vector<std::string>> rows;
        for (const auto& oc : c.options)
            rows.push_back({to_string(oc.option), oc.usd_per_hour ? money(*oc.usd_per_hour) + "/h" : "-",
                            oc.usd_total ? money(*oc.usd_total) : "-",
                            oc.usd_total_with_failures ? money(*oc.usd_total_with_failures) : "-",
                            oc.effective_time_s > 0 ? duration(oc.effective_time_s) : "-"});
        if (!rows.empty())
            sec.markdown += md_table({"option", "price", "cost, no failures", "cost with failures", "time with failures"}, rows);
        if (c.time_to_train_s > 0)
            sec.markdown += fmt::format(
                "\nGoodput {:.1f}% (spot: {:.1f}%): the job is interrupted every {} on average (spot: every {}), "
                "checkpoints {:.2f} TB every {} to {} (written in {}{}; restored in {}); {:.0f} chip-hours. Failure "
                "rates: {}. Prices: {} ({}).\n",
                100 * c.goodput.goodput, 100 * c.goodput_spot.goodput, duration(c.goodput.mtbf_s),
                duration(c.goodput_spot.mtbf_s), c.goodput.checkpoint_bytes / 1e12, duration(c.goodput.interval_s),
                c.goodput.checkpoint_storage, duration(c.goodput.checkpoint_write_s),
                c.goodput.async ? ", in the background; training pauses " + duration(c.goodput.checkpoint_blocking_s)
                                : std::string(", training paused"),
                duration(c.goodput.restore_s), c.chip_hours,
                local_paths_out(c.reliability_file), c.price_source, c.price_date);
        if (c.time_to_train_s > 0 && c.train.evaluations > 0)
            sec.markdown += fmt::format(
                "\nTimes and costs include the evaluation: {} forward-only passes of {:.1f} s, {} in all ({:.1f}% of "
                "the wall time without failures).\n",
                c.train.evaluations, c.train.eval_pass_s, duration(c.train.eval_s), 100 * c.train.eval_share());
        out.push_back(sec);
    }
    {
        Section sec{"Provisioning", "", {}};
        const Provisioning pv =
            provisioning_for(s.name, s.system, s.model, r.provisioned, r.options.price, r.scenario_cost.price_region);
        sec.markdown += "For " + r.provisioned_plan + " on " + s.system.label + ", " + to_string(r.options.price) + ":\n\n";
        if (!pv.commands.empty()) {
            sec.markdown += "```sh\n";
            for (const auto& c : pv.commands) sec.markdown += c + "\n";
            sec.markdown += "```\n\n";
        }
        if (!pv.launch_flags.empty()) sec.markdown += pv.framework + " parallelism settings:\n\n```\n" + pv.launch_flags + "\n```\n\n";
        for (const auto& n : pv.notes) sec.markdown += "- " + n + "\n";
        out.push_back(sec);
    }
    {
        Section sec{"Assumptions and sources", "", {}};
        sec.markdown += "- Op costs: " + local_paths_out(st.efficiency_source) + "\n";
        sec.markdown += "- Network: " + (st.network_backend.empty() ? std::string("analytical") : st.network_backend) + "\n";
        sec.markdown += "- Strategy screening: podsim's closed-form step (the event engine's priced step under the "
                        "schedule's formula; within 1% of it on sampled plans); every plan shown was re-simulated "
                        "with the engine.\n";
        sec.markdown += "- Chip and price data: hardware/catalog/ (every figure with its source); prices dated " +
                        (r.scenario_cost.price_date.empty() ? std::string("-") : r.scenario_cost.price_date) + ".\n";
        sec.markdown += "- Accuracy on published runs: see README, Accuracy (MAPE and worst error of `podsim validate`).\n";
        out.push_back(sec);
    }
    return out;
}

}  // namespace

std::string report_markdown(const Report& r, const std::map<std::string, std::string>& charts) {
    std::string o = "# podsim report: " + r.scenario.name + "\n\n";
    o += "Scenario file: `" + shareable_path(r.scenario.file) + "`. The same report with its charts inline: `report.html`.\n\n";
    for (const auto& sec : sections(r)) {
        o += "## " + sec.title + "\n\n" + sec.markdown + "\n";
        for (const auto& id : sec.charts)
            if (charts.count(id)) o += "![" + id + "](charts/" + id + ".svg)\n\n";
    }
    return o;
}

std::string report_html(const Report& r, const std::map<std::string, std::string>& charts) {
    std::string o = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>podsim report: " +
                     svg::escape(r.scenario.name) + "</title>\n<style>\n"
                     "body{font-family:sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;color:#222}\n"
                     "table{border-collapse:collapse;margin:0.5em 0}td,th{border:1px solid #ccc;padding:3px 8px;"
                     "font-size:13px}th{background:#f3f3f3}td.num{text-align:right}\n"
                     "pre{background:#f6f6f6;padding:0.8em;overflow-x:auto;font-size:12px;white-space:pre-wrap}\n"
                     "svg.chart{display:block;margin:1em 0;max-width:100%;height:auto}\n</style></head><body>\n";
    o += "<h1>podsim report: " + svg::escape(r.scenario.name) + "</h1>\n";
    for (const auto& sec : sections(r)) {
        o += "<h2>" + svg::escape(sec.title) + "</h2>\n" + markdown_to_html(sec.markdown);
        for (const auto& id : sec.charts)
            if (charts.count(id)) o += charts.at(id);
    }
    // A self-check a headless browser can read back from the DOM (attributes of <body>, nothing shown to a reader):
    // how many charts have a non-empty rendered box, and how many text labels the browser's layout puts outside
    // their chart's view box (a clipped label).
    o += "<script>\n"
         "(function(){var n=0,clipped=[],c=document.querySelectorAll('svg.chart');for(var i=0;i<c.length;i++){"
         "var b=c[i].getBBox(),v=c[i].viewBox.baseVal;"
         "if(b.width>0&&b.height>0&&c[i].querySelectorAll('rect,circle,polyline').length>0)n++;"
         "var t=c[i].querySelectorAll('text');for(var k=0;k<t.length;k++){var r=t[k].getBBox(),"
         "tf=t[k].transform.baseVal.consolidate(),m=tf?tf.matrix:{a:1,b:0,c:0,d:1,e:0,f:0},xs=[],ys=[];"
         "[[r.x,r.y],[r.x+r.width,r.y],[r.x,r.y+r.height],[r.x+r.width,r.y+r.height]].forEach(function(q){"
         "xs.push(m.a*q[0]+m.c*q[1]+m.e);ys.push(m.b*q[0]+m.d*q[1]+m.f);});"
         "var x0=Math.min.apply(null,xs),x1=Math.max.apply(null,xs),y0=Math.min.apply(null,ys),y1=Math.max.apply(null,ys);"
         "if(x0<v.x-0.5||y0<v.y-0.5||x1>v.x+v.width+0.5||y1>v.y+v.height+0.5)clipped.push(c[i].id+': '+t[k].textContent);}}"
         "document.body.setAttribute('data-charts-rendered',n+' of '+c.length);"
         "document.body.setAttribute('data-labels-clipped',String(clipped.length));"
         "document.body.setAttribute('data-clipped-labels',clipped.join(' | '));})();\n</script>\n";
    return o + "</body></html>\n";
}

}  // namespace podsim
