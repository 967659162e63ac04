// How users name hardware: makers, clouds and papers spell the same chip "H100-SXM5-80GB", "h100_sxm5_80gb" or
// "H100 SXM5 80GB". Names are compared in a normal form (lower case, without '-', '_', ' ' and '.'), and an unknown
// name is answered with the nearest known ones (edit distance on the normal form).
#pragma once
#include <string>
#include <vector>

namespace podsim {

std::string normal_name(const std::string& name);

// Levenshtein distance (insert, delete, substitute: 1 each).
int edit_distance(const std::string& a, const std::string& b);

// Up to `k` of `known` nearest to `name` (normal forms compared; a known name that contains the query, or is
// contained in it, ranks just ahead of one edit away), nearest first, ties in the order given; a name more than
// half the longer name's length away is never suggested.
std::vector<std::string> nearest_names(const std::string& name, const std::vector<std::string>& known, int k = 3);

// "; nearest known: a, b, c" or "" when there is none.
std::string nearest_hint(const std::string& name, const std::vector<std::string>& known);

}  // namespace podsim
