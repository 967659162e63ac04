// The report a manager can read and an engineer can trust: the scenario's plan and the best one found, where the
// time goes (per device class, per category), the strategies compared, time vs cost, scaling over chip counts,
// cost and goodput per purchase option, provisioning commands, and the assumptions with their sources.
// Written as Markdown (charts as SVG files beside it) and as one self-contained HTML file (charts inline), from
// the Report that planner/report_data.hpp builds.
#pragma once
#include <map>
#include <string>

#include "planner/report_data.hpp"

namespace podsim {

// Chart id -> SVG document (the HTML inlines them; the Markdown links charts/<id>.svg).
std::map<std::string, std::string> report_charts(const Report& r);
std::string report_markdown(const Report& r, const std::map<std::string, std::string>& charts);
std::string report_html(const Report& r, const std::map<std::string, std::string>& charts);

}  // namespace podsim
