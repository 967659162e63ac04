// The documentation of a closed set of choices (an enum: collective algorithms, network level kinds, topologies,
// pipeline schedules) for `podsim list`: each value's name as inputs and outputs spell it, what it is, and the
// parameters that shape it, one line each. Each table lives beside its enum; the names come from its to_string.
#pragma once
#include <string>
#include <vector>

namespace podsim {

struct ParamDoc {
    std::string name;  // as the catalog, a scenario or the code calls it
    std::string doc;   // one line, with its unit
};

struct ChoiceDoc {
    std::string name;     // the value's to_string
    std::string summary;  // one line
    std::vector<ParamDoc> params;
};

}  // namespace podsim
