// Charts as inline SVG, for reports that open without network access: stacked bars, scatter, lines, and a
// timeline (Gantt) of already-binned segments. Plain strings in, one <svg class="chart"> element out.
#pragma once
#include <string>
#include <vector>

namespace podsim::svg {

struct Category {
    std::string name, color;
};

std::string escape(const std::string& s);

// One horizontal bar per label, split into the categories' parts (values[row][category]), with a legend.
std::string stacked_bars(const std::string& id, const std::string& title, const std::vector<std::string>& labels,
                         const std::vector<std::vector<double>>& values, const std::vector<Category>& categories,
                         const std::string& unit);

struct Point {
    double x = 0, y = 0;
    std::string label;        // tooltip
    bool highlight = false;
    std::string tag;          // drawn beside a highlighted point (keep it short: "v4-4096, 12.3 d")
};
// Points on linear axes; highlighted ones drawn larger and joined in x order (a Pareto front).
std::string scatter(const std::string& id, const std::string& title, const std::vector<Point>& points,
                    const std::string& x_label, const std::string& y_label);

struct Line {
    std::string name, color;
    std::vector<double> x, y;
    bool dashed = false;
};
// Lines over a log2 x axis (chip counts) and a linear y axis starting at 0.
std::string line_chart(const std::string& id, const std::string& title, const std::vector<Line>& lines,
                       const std::string& x_label, const std::string& y_label);

struct Segment {
    double start = 0, end = 0;
    int category = 0;
};
struct GanttRow {
    std::string name;
    std::vector<Segment> segments;
};
// Rows of segments over [0, total]; gaps show as idle (light grey).
std::string gantt(const std::string& id, const std::string& title, const std::vector<GanttRow>& rows,
                  const std::vector<Category>& categories, double total, const std::string& unit);

}  // namespace podsim::svg
