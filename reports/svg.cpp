#include "reports/svg.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace podsim::svg {

namespace {

constexpr int kWidth = 960;
constexpr int kLeft = 250, kRight = 30;

std::string open(const std::string& id, const std::string& title, int height) {
    return fmt::format(
        "<svg id=\"{}\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
        "font-family=\"sans-serif\" font-size=\"12\"><title>{}</title>"
        "<text x=\"10\" y=\"18\" font-size=\"14\" font-weight=\"bold\">{}</text>\n",
        id, kWidth, height, kWidth, height, escape(title), escape(title));
}

// Width of a 12 px sans-serif label, from above (DejaVu Sans averages about 6.6 px a character at 12 px): layout
// sizes margins with it so that no label is cut by the chart's edge (the report's browser test measures this).
int text_px(const std::string& s) { return 7 * static_cast<int>(s.size()); }

// A legend from x = 10, wrapping onto further lines; returns the markup and adds its extra height to `extra`.
std::string legend(const std::vector<Category>& cats, int y, int& extra) {
    std::string o;
    int x = 10;
    extra = 0;
    for (const auto& c : cats) {
        const int w = 30 + text_px(c.name);
        if (x > 10 && x + w > kWidth - 10) x = 10, y += 18, extra += 18;
        o += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>\n",
                         x, y, c.color, x + 16, y + 10, escape(c.name));
        x += w;
    }
    return o;
}

// A label cut into lines of at most `max_chars` at spaces.
std::vector<std::string> wrap(const std::string& s, size_t max_chars) {
    std::vector<std::string> lines(1);
    size_t at = 0;
    while (at < s.size()) {
        size_t sp = s.find(' ', at);
        if (sp == std::string::npos) sp = s.size();
        const std::string word = s.substr(at, sp - at);
        if (!lines.back().empty() && lines.back().size() + 1 + word.size() > max_chars) lines.emplace_back();
        lines.back() += (lines.back().empty() ? "" : " ") + word;
        at = sp + 1;
    }
    return lines;
}

// A right-aligned row label ending at x, one or more lines centred on y.
std::string row_label(const std::vector<std::string>& lines, int x, double y) {
    std::string o = fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">", x, y - 6.5 * (lines.size() - 1) + 4);
    for (size_t i = 0; i < lines.size(); ++i)
        o += fmt::format("<tspan x=\"{}\" dy=\"{}\">{}</tspan>", x, i ? 13 : 0, escape(lines[i]));
    return o + "</text>\n";
}

// A "nice" axis maximum and tick step for [0, v].
std::pair<double, double> nice_axis(double v) {
    if (!(v > 0)) return {1, 0.25};
    const double mag = std::pow(10, std::floor(std::log10(v)));
    for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
        if (m * mag >= v) return {m * mag, m * mag / 5};
    return {10 * mag, 2 * mag};
}

std::string num(double v) { return fmt::format("{:.4g}", v); }

}  // namespace

std::string escape(const std::string& s) {
    std::string o;
    for (char c : s) {
        switch (c) {
            case '&': o += "&amp;"; break;
            case '<': o += "&lt;"; break;
            case '>': o += "&gt;"; break;
            case '"': o += "&quot;"; break;
            default: o += c;
        }
    }
    return o;
}

std::string stacked_bars(const std::string& id, const std::string& title, const std::vector<std::string>& labels,
                         const std::vector<std::vector<double>>& values, const std::vector<Category>& cats,
                         const std::string& unit) {
    // Row labels get the room they need (up to 60 characters a line, wrapped beyond), the bars the rest.
    constexpr size_t kMaxChars = 60;
    std::vector<std::vector<std::string>> lines;
    int widest = 0;
    for (const auto& l : labels) {
        lines.push_back(wrap(l, kMaxChars));
        for (const auto& x : lines.back()) widest = std::max(widest, text_px(x));
    }
    const int left = std::max(kLeft, widest + 16);
    int extra = 0;
    const std::string legend_markup = legend(cats, 28, extra);
    const int gap = 8, top = 50 + extra;
    std::vector<int> row_h;
    for (const auto& l : lines) row_h.push_back(std::max(22, 13 * static_cast<int>(l.size()) + 4));
    int rows_h = 0;
    for (int h : row_h) rows_h += h + gap;
    const int height = top + rows_h + 60;
    double vmax = 0;
    for (const auto& row : values) {
        double sum = 0;
        for (double v : row) sum += v;
        vmax = std::max(vmax, sum);
    }
    const auto [axis_max, step] = nice_axis(vmax);
    const double plot = kWidth - left - kRight;
    std::string o = open(id, title, height);
    o += legend_markup;
    const int axis_y = top + rows_h;
    for (double t = 0; t <= axis_max * 1.0001; t += step) {
        const double x = left + plot * t / axis_max;
        o += fmt::format("<line x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"#ddd\"/><text x=\"{:.1f}\" y=\"{}\" "
                         "text-anchor=\"middle\">{}</text>\n",
                         x, top - 4, x, axis_y, x, axis_y + 14, num(t));
    }
    o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", left + plot / 2, axis_y + 32, escape(unit));
    int y = top;
    for (size_t r = 0; r < labels.size(); ++r) {
        o += row_label(lines[r], left - 6, y + row_h[r] / 2.0);
        double x = left;
        for (size_t c = 0; c < cats.size() && c < values[r].size(); ++c) {
            const double w = plot * values[r][c] / axis_max;
            if (w <= 0) continue;
            o += fmt::format("<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"><title>{}: {} {}</title></rect>\n",
                             x, y, w, row_h[r], cats[c].color, escape(cats[c].name), num(values[r][c]), escape(unit));
            x += w;
        }
        y += row_h[r] + gap;
    }
    return o + "</svg>\n";
}

std::string scatter(const std::string& id, const std::string& title, const std::vector<Point>& pts,
                    const std::string& x_label, const std::string& y_label) {
    const int height = 420, top = 40, bottom = 60;
    double xmax = 0, ymax = 0, xmin = 1e300, ymin = 1e300;
    for (const auto& p : pts) xmax = std::max(xmax, p.x), ymax = std::max(ymax, p.y), xmin = std::min(xmin, p.x), ymin = std::min(ymin, p.y);
    if (pts.empty()) xmin = ymin = 0, xmax = ymax = 1;
    // Axes from a little below the smallest value: the spread between plans is what matters.
    auto lo = [](double mn, double mx) { return std::max(0.0, mn - 0.1 * (mx - mn + mn * 0.05)); };
    const double x0 = lo(xmin, xmax), y0 = lo(ymin, ymax);
    const double x1 = xmax + 0.05 * (xmax - x0 + 1e-12), y1 = ymax + 0.05 * (ymax - y0 + 1e-12);
    const double pw = kWidth - 90 - kRight, ph = height - top - bottom;
    auto X = [&](double v) { return 90 + pw * (v - x0) / (x1 - x0); };
    auto Y = [&](double v) { return top + ph * (1 - (v - y0) / (y1 - y0)); };
    std::string o = open(id, title, height);
    for (int i = 0; i <= 5; ++i) {
        const double xv = x0 + (x1 - x0) * i / 5, yv = y0 + (y1 - y0) * i / 5;
        o += fmt::format("<line x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"#eee\"/><text x=\"{:.1f}\" y=\"{}\" "
                         "text-anchor=\"middle\">{}</text>\n",
                         X(xv), top, X(xv), top + ph, X(xv), top + ph + 14, num(xv));
        o += fmt::format("<line x1=\"90\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#eee\"/><text x=\"84\" y=\"{:.1f}\" "
                         "text-anchor=\"end\">{}</text>\n",
                         Y(yv), 90 + pw, Y(yv), Y(yv) + 4, num(yv));
    }
    o += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", 90 + pw / 2, height - 20, escape(x_label));
    o += fmt::format("<text x=\"16\" y=\"{:.1f}\" transform=\"rotate(-90 16 {:.1f})\" text-anchor=\"middle\">{}</text>\n",
                     top + ph / 2, top + ph / 2, escape(y_label));
    std::vector<Point> front;
    for (const auto& p : pts)
        if (p.highlight) front.push_back(p);
    std::sort(front.begin(), front.end(), [](const Point& a, const Point& b) { return a.x < b.x; });
    if (front.size() > 1) {
        std::string path;
        for (const auto& p : front) path += fmt::format("{:.1f},{:.1f} ", X(p.x), Y(p.y));
        o += "<polyline fill=\"none\" stroke=\"#d62728\" stroke-width=\"1.5\" points=\"" + path + "\"/>\n";
    }
    for (const auto& p : pts)
        o += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" fill=\"{}\" fill-opacity=\"0.8\"><title>{}</title></circle>\n",
                         X(p.x), Y(p.y), p.highlight ? 6 : 3.5, p.highlight ? "#d62728" : "#1f77b4", escape(p.label));
    // The Pareto points carry their tags: beside the point, on the side with room, staggered up and down so that
    // neighbours along the front do not overprint, and kept inside the plot.
    int k = 0;
    for (const auto& p : front) {
        if (p.tag.empty()) continue;
        const double x = X(p.x), w = text_px(p.tag);
        const bool right = x + 10 + w <= kWidth - 4;
        double y = Y(p.y) + (k++ % 2 ? 16 : -9);
        y = std::clamp(y, top + 12.0, top + ph - 4.0);
        const double tx = right ? x + 9 : std::max(4.0 + w, x - 9);
        o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"{}\" fill=\"#a51c1c\">{}</text>\n", tx, y,
                         right ? "start" : "end", escape(p.tag));
    }
    return o + "</svg>\n";
}

std::string line_chart(const std::string& id, const std::string& title, const std::vector<Line>& lines,
                       const std::string& x_label, const std::string& y_label) {
    const int height = 400, top = 50, bottom = 60;
    double xmin = 1e300, xmax = 0, ymax = 0;
    for (const auto& l : lines)
        for (size_t i = 0; i < l.x.size(); ++i)
            xmin = std::min(xmin, l.x[i]), xmax = std::max(xmax, l.x[i]), ymax = std::max(ymax, l.y[i]);
    if (!(xmax > 0)) xmin = 1, xmax = 2;
    if (xmin == xmax) xmin /= 2, xmax *= 2;
    // Plain locals, not a structured binding: clang 14 cannot capture bindings in lambdas (C++20 P1091).
    const auto [y_axis_max, ystep] = nice_axis(ymax);
    const double y1 = y_axis_max;
    const double pw = kWidth - 90 - kRight, ph = height - top - bottom;
    const double lx0 = std::log2(xmin), lx1 = std::log2(xmax);
    auto X = [&](double v) { return 90 + pw * (std::log2(v) - lx0) / (lx1 - lx0); };
    auto Y = [&](double v) { return top + ph * (1 - v / y1); };
    std::string o = open(id, title, height);
    std::vector<Category> cats;
    for (const auto& l : lines) cats.push_back({l.name, l.color});
    int extra = 0;
    o += legend(cats, 28, extra);  // two short names: one line
    for (double t = 0; t <= y1 * 1.0001; t += ystep)
        o += fmt::format("<line x1=\"90\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#eee\"/><text x=\"84\" y=\"{:.1f}\" "
                         "text-anchor=\"end\">{}</text>\n",
                         Y(t), 90 + pw, Y(t), Y(t) + 4, num(t));
    std::vector<double> ticks;
    for (const auto& l : lines) ticks.insert(ticks.end(), l.x.begin(), l.x.end());
    std::sort(ticks.begin(), ticks.end());
    ticks.erase(std::unique(ticks.begin(), ticks.end()), ticks.end());
    for (double t : ticks)
        o += fmt::format("<line x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"#eee\"/><text x=\"{:.1f}\" y=\"{}\" "
                         "text-anchor=\"middle\">{}</text>\n",
                         X(t), top, X(t), top + ph, X(t), top + ph + 14, num(t));
    o += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", 90 + pw / 2, height - 20, escape(x_label));
    o += fmt::format("<text x=\"16\" y=\"{:.1f}\" transform=\"rotate(-90 16 {:.1f})\" text-anchor=\"middle\">{}</text>\n",
                     top + ph / 2, top + ph / 2, escape(y_label));
    for (const auto& l : lines) {
        std::string path;
        for (size_t i = 0; i < l.x.size(); ++i) path += fmt::format("{:.1f},{:.1f} ", X(l.x[i]), Y(l.y[i]));
        o += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{} points=\"{}\"/>\n", l.color,
                         l.dashed ? " stroke-dasharray=\"6 4\"" : "", path);
        for (size_t i = 0; i < l.x.size(); ++i)
            o += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\"><title>{}: {} at {}</title></circle>\n",
                             X(l.x[i]), Y(l.y[i]), l.color, escape(l.name), num(l.y[i]), num(l.x[i]));
    }
    return o + "</svg>\n";
}

std::string gantt(const std::string& id, const std::string& title, const std::vector<GanttRow>& rows,
                  const std::vector<Category>& cats, double total, const std::string& unit) {
    std::vector<Category> with_idle = cats;
    with_idle.push_back({"idle (bubble, waits)", "#e8e8e8"});
    int extra = 0;
    const std::string legend_markup = legend(with_idle, 28, extra);
    const int row_h = 18, gap = 6, top = 50 + extra;
    const int height = top + static_cast<int>(rows.size()) * (row_h + gap) + 50;
    const double plot = kWidth - kLeft - kRight;
    const auto [axis_top, step] = nice_axis(total);
    const double axis_max = axis_top;  // a plain local: clang 14 cannot capture structured bindings in lambdas
    auto X = [&](double t) { return kLeft + plot * t / axis_max; };
    std::string o = open(id, title, height);
    o += legend_markup;
    const int axis_y = top + static_cast<int>(rows.size()) * (row_h + gap);
    for (double t = 0; t <= axis_max * 1.0001; t += step)
        o += fmt::format("<line x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"#ccc\"/><text x=\"{:.1f}\" y=\"{}\" "
                         "text-anchor=\"middle\">{}</text>\n",
                         X(t), top - 4, X(t), axis_y, X(t), axis_y + 14, num(t));
    o += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", kLeft + plot / 2, axis_y + 32, escape(unit));
    for (size_t r = 0; r < rows.size(); ++r) {
        const int y = top + static_cast<int>(r) * (row_h + gap);
        o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", kLeft - 6, y + 13, escape(rows[r].name));
        o += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"#e8e8e8\"/>\n", kLeft, y,
                         X(total) - kLeft, row_h);
        for (const auto& s : rows[r].segments)
            o += fmt::format("<rect x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" fill=\"{}\"/>\n", X(s.start), y,
                             std::max(0.5, X(s.end) - X(s.start)), row_h, cats[s.category].color);
    }
    return o + "</svg>\n";
}

}  // namespace podsim::svg
