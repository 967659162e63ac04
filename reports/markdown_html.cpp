#include "reports/markdown_html.hpp"

#include <cctype>
#include <vector>

#include "reports/svg.hpp"

namespace podsim {

std::string markdown_to_html(const std::string& md) {
    std::string out, para;
    std::vector<std::string> lines;
    size_t a = 0;
    while (a <= md.size()) {
        size_t b = md.find('\n', a);
        if (b == std::string::npos) b = md.size();
        lines.push_back(md.substr(a, b - a));
        a = b + 1;
    }
    auto inline_fmt = [](const std::string& s) {
        std::string e = svg::escape(s), o;
        bool bold = false, code = false;
        for (size_t i = 0; i < e.size(); ++i) {
            if (e.compare(i, 2, "**") == 0) o += bold ? "</b>" : "<b>", bold = !bold, ++i;
            else if (e[i] == '`') o += code ? "</code>" : "<code>", code = !code;
            else o += e[i];
        }
        return o;
    };
    auto flush = [&]() {
        if (!para.empty()) out += "<p>" + inline_fmt(para) + "</p>\n", para.clear();
    };
    for (size_t i = 0; i < lines.size(); ++i) {
        const std::string& l = lines[i];
        if (l.rfind("```", 0) == 0) {
            flush();
            out += "<pre>";
            while (++i < lines.size() && lines[i].rfind("```", 0) != 0) out += svg::escape(lines[i]) + "\n";
            out += "</pre>\n";
        } else if (l.rfind("|", 0) == 0) {
            flush();
            out += "<table>\n";
            bool head = true;
            for (; i < lines.size() && lines[i].rfind("|", 0) == 0; ++i) {
                if (lines[i].rfind("|---", 0) == 0) continue;
                out += "<tr>";
                size_t p = 1;
                while (p < lines[i].size()) {
                    size_t q = lines[i].find('|', p);
                    if (q == std::string::npos) break;
                    std::string cell = lines[i].substr(p, q - p);
                    if (!cell.empty() && cell.front() == ' ') cell.erase(0, 1);
                    if (!cell.empty() && cell.back() == ' ') cell.pop_back();
                    // Figures right-aligned, words left.
                    const bool num = !cell.empty() && (std::isdigit(static_cast<unsigned char>(cell[0])) || cell[0] == '$') &&
                                     cell.find(' ', 0) >= cell.size() - 5;
                    out += (head ? "<th>" : num ? "<td class=\"num\">" : "<td>") + inline_fmt(cell) + (head ? "</th>" : "</td>");
                    p = q + 1;
                }
                out += "</tr>\n";
                head = false;
            }
            --i;
            out += "</table>\n";
        } else if (l.rfind("- ", 0) == 0) {
            flush();
            out += "<ul>\n";
            for (; i < lines.size() && lines[i].rfind("- ", 0) == 0; ++i) out += "<li>" + inline_fmt(lines[i].substr(2)) + "</li>\n";
            --i;
            out += "</ul>\n";
        } else if (l.empty()) {
            flush();
        } else {
            para += (para.empty() ? "" : " ") + l;
        }
    }
    flush();
    return out;
}

}  // namespace podsim
