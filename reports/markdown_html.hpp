// The little Markdown the reports write (paragraphs, **bold**, `code`, lists, pipe tables, fenced code) as HTML,
// so that the HTML report says exactly what the Markdown one does.
#pragma once
#include <string>

namespace podsim {

std::string markdown_to_html(const std::string& md);

}  // namespace podsim
