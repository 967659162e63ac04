// podsim fit: derive a chip's GEMM efficiency for one precision class from published end-to-end runs.
// Half the matching dense runs (alternate ones, in file order) fit the single number; the other half are held out and
// their error is reported, so the fit can be judged on runs it did not see.
#include <cmath>
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "hardware/catalog.hpp"
#include "models/published_run.hpp"
#include "models/step.hpp"

namespace podsim {

namespace {

double predict(const PublishedRun& run, double fraction) {
    StepOptions opt;
    opt.matmul_fraction_override = fraction;
    const StepResult r = simulate_published(run, opt).step;
    if (!(r.step_time_s > 0)) {  // a split, placement or size rule broken: no time to fit to
        std::string why;
        for (const auto& x : r.infeasible) why += (why.empty() ? "" : "; ") + x;
        throw InputError(run.id, "$", "cannot be simulated: " + why);
    }
    return r.step_time_s;
}

double mean_log_ratio(const std::vector<const PublishedRun*>& runs, double fraction) {
    double s = 0;
    for (const auto* r : runs) s += std::log(predict(*r, fraction) / r->published_step_time_s);
    return s / runs.size();
}

}  // namespace

int cmd_fit(const Args& args) {
    const CommonFlags f = parse_flags(args, "fit", {"--chip", "--precision"});
    const std::string chip = f.value("--chip"), precision = f.value("--precision"), out = f.out;
    const Args& files = f.positional;
    if (files.empty() || chip.empty() || (precision != "16bit" && precision != "fp8"))
        throw UsageError("fit: expected RUNS.json... --chip ID --precision 16bit|fp8 [--out PROFILE.json]");
    const Catalog cat = Catalog::load(default_catalog_dir());
    const ChipSpec* c = cat.find_chip(chip);
    if (!c) throw UsageError("fit: unknown chip \"" + chip + "\"" + cat.chip_hint(chip));
    // The precisions measured in the class: fp16/bf16 or fp8. int8 and fp4 runs are priced in a class (plan.hpp,
    // efficiency_class) but would fit their own recipe's costs into it, so they stay out.
    auto in_class = [&](Precision p) {
        return precision == "fp8" ? p == Precision::fp8 : p == Precision::fp16 || p == Precision::bf16;
    };
    std::vector<PublishedRun> all;
    for (const auto& f : files)
        for (auto& r : load_published_runs(f, cat))
            // Dense runs only: an MoE run's error is mostly its routing and expert mechanisms (dispatch, grouped
            // GEMMs, load skew), which one dense GEMM efficiency must not absorb.
            if (r.error.empty() && r.system.chip.id == c->id && in_class(r.plan.precision) && !r.model.moe.enabled())
                all.push_back(std::move(r));
    if (all.size() < 2) throw UsageError("fit: fewer than two dense published runs on " + c->id + " at " + precision);
    std::vector<const PublishedRun*> train, held;
    for (size_t i = 0; i < all.size(); ++i) (i % 2 == 0 ? train : held).push_back(&all[i]);

    // Step time falls as the GEMM efficiency rises: bisect for zero mean log error on the training half.
    double lo = 0.2, hi = 1.0;
    for (int it = 0; it < 40; ++it) {
        const double mid = 0.5 * (lo + hi);
        (mean_log_ratio(train, mid) > 0 ? lo : hi) = mid;
    }
    const double fit = std::round(0.5 * (lo + hi) * 1000) / 1000;

    Json fitted = Json::array(), held_out = Json::array();
    std::string table = fmt::format("{:<36} {:>9} {:>12} {:>12} {:>8}\n", "id", "set", "published_s", "predicted_s", "error%");
    double train_abs = 0, held_abs = 0;
    for (size_t i = 0; i < all.size(); ++i) {
        const bool is_train = i % 2 == 0;
        const double pred = predict(all[i], fit);
        const double err = 100 * (pred - all[i].published_step_time_s) / all[i].published_step_time_s;
        (is_train ? train_abs : held_abs) += std::fabs(err);
        (is_train ? fitted : held_out).push_back({{"id", all[i].id}, {"error_pct", std::round(err * 100) / 100}});
        table += fmt::format("{:<36} {:>9} {:>12.3f} {:>12.3f} {:>+8.1f}\n", all[i].id, is_train ? "fit" : "held-out",
                             all[i].published_step_time_s, pred, err);
    }
    const double train_mape = train_abs / train.size(), held_mape = held_abs / held.size();
    table += fmt::format("\n{} {}: GEMM efficiency {:.3f} of peak (stated default {:.3f}); fit MAPE {:.2f}%, held-out MAPE {:.2f}%\n",
                         c->id, precision, fit,
                         precision == "fp8" ? c->eff.fp8_matmul_peak_fraction : c->eff.matmul_peak_fraction, train_mape,
                         held_mape);
    Json profile = {{"schema_version", 1},
                    {"chip", c->id},
                    {"precision", precision},
                    {"matmul_peak_fraction", fit},
                    {"method", fmt::format("fitted by podsim fit to {} published runs, {} held out (held-out MAPE {:.1f}%)",
                                           train.size(), held.size(), held_mape)},
                    {"fitted_on", fitted},
                    {"held_out", held_out},
                    {"fit", {{"train_mape_pct", train_mape}, {"held_out_mape_pct", held_mape}, {"runs_files", files}}}};
    emit(table, "");
    if (!out.empty()) emit(profile.dump(1) + "\n", out);
    return 0;
}

}  // namespace podsim
