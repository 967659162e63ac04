// Shared test fixtures: the shipped catalog, scenario paths, and running the podsim binary.
#pragma once
#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <vector>

#include "hardware/catalog.hpp"
#include "hardware/json_reader.hpp"
#include "models/published_run.hpp"
#include "models/software_stack.hpp"
#include "models/transformer.hpp"

namespace podsim::test {

// Whether this build runs under AddressSanitizer (some checks cannot: see where it is used).
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAsan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAsan = true;
#else
inline constexpr bool kAsan = false;
#endif
#else
inline constexpr bool kAsan = false;
#endif

// A relative comparison: doctest::Approx alone adds an absolute tolerance of epsilon (its scale defaults to 1),
// which would let any two small times (milliseconds) compare equal.
inline doctest::Approx approx(double v) { return doctest::Approx(v).scale(0); }

const Catalog& catalog();
// Llama 3 8B's shape (GQA: 32 query heads, 8 KV heads of 128; SwiGLU, RMSNorm, RoPE; 8192-token sequences), the
// layer the mechanism tests derive their expected values from.
ModelSpec llama3_8b();
std::string scenario(const std::string& name);  // path of scenarios/<name>
std::vector<std::string> shipped_scenarios();   // every scenarios/*.json (not the subfolders), sorted
std::string shared(const std::string& rel);     // path under ../shared

struct CommandResult {
    int exit_code;
    std::string out;
    std::string err;
};
// Runs `podsim <args>` in a shell; stdout and stderr captured separately.
CommandResult run_podsim(const std::string& args);
std::string temp_dir();
std::string slurp(const std::string& path);  // a file's bytes ("" when it cannot be read)
void write_file(const std::string& path, const std::string& text);
// Validates podsim JSON outputs against docs/output.schema.json with python3-jsonschema (tests/validate_json.py,
// Debian's interpreter); 0 when every file validates, the validator printing each violation otherwise.
int validate_json_outputs(const std::vector<std::string>& files);
// Loads a software catalog holding only hardware/catalog/software/nemo.json changed by `edit` (in a fresh folder
// named after `tag`) and returns the input error's message, "" when it loads.
std::string stack_catalog_error(const std::string& tag, const std::function<void(Json&)>& edit);
// One record of a published-run file (a JSON array) by its id; throws if the file has none.
Json published_record(const std::string& file, const std::string& id);
// The record loaded alone through the published-run adapter (written to a temporary file named after `tag`).
PublishedRun load_record(const Json& record, const std::string& tag);
// The shipped software stack a framework text names (hardware/catalog/software, loaded once); throws if none does.
const SoftwareStack& shipped_stack(const std::string& framework);

}  // namespace podsim::test
