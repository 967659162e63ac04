// Strict JSON access: every read names its path; unknown keys and wrong types are errors, never defaults.
#pragma once
#include <nlohmann/json.hpp>

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "hardware/input_error.hpp"

namespace podsim {

using Json = nlohmann::json;

// Parses a file; a syntax error, a number beyond a double (1e400) or a file over max_json_file_bytes becomes an
// InputError naming the file.
inline constexpr long long max_json_file_bytes = 64LL << 20;
Json load_json_file(const std::string& path);
// The same for text already in memory (fuzzing, tests); `file` names it in errors.
Json parse_json_text(const std::string& text, const std::string& file);

// A view of one JSON object with its file and path, for error messages.
class JsonObject {
public:
    JsonObject(const Json& j, std::string file, std::string path);

    const std::string& file() const { return file_; }
    const std::string& path() const { return path_; }
    const Json& raw() const { return j_; }
    bool has(const std::string& key) const;
    std::string at_path(const std::string& key) const { return path_ + "." + key; }
    [[noreturn]] void fail(const std::string& key, const std::string& expected) const;

    double number(const std::string& key) const;                 // required, finite
    double positive(const std::string& key) const;               // required, > 0
    double non_negative(const std::string& key) const;           // required, >= 0
    std::optional<double> opt_number(const std::string& key) const;  // absent or null -> nullopt
    long long integer(const std::string& key) const;             // required integral
    long long positive_int(const std::string& key) const;        // required integral >= 1
    std::optional<long long> opt_int(const std::string& key) const;
    // Ranged reads (hardware/limits.hpp): an integer in [lo, hi], returned in the type the model keeps, so no
    // caller narrows an input value.
    long long int_in(const std::string& key, long long lo, long long hi) const;
    long long int_in(const std::string& key, long long lo, long long hi, long long otherwise) const;  // absent/null
    int count(const std::string& key, long long lo, long long hi) const;
    int count(const std::string& key, long long lo, long long hi, int otherwise) const;  // absent or null
    double number_in(const std::string& key, double lo, double hi) const;
    double number_in(const std::string& key, double lo, double hi, double otherwise) const;  // absent or null
    std::string string(const std::string& key) const;
    std::optional<std::string> opt_string(const std::string& key) const;
    bool boolean(const std::string& key) const;
    std::optional<bool> opt_bool(const std::string& key) const;
    std::string one_of(const std::string& key, std::initializer_list<const char*> allowed) const;
    JsonObject object(const std::string& key) const;
    std::optional<JsonObject> opt_object(const std::string& key) const;
    std::vector<std::string> string_array(const std::string& key) const;
    const Json& array(const std::string& key) const;

    // Rejects keys not in `allowed` (a typo must not silently fall back to a default).
    void only_keys(std::initializer_list<const char*> allowed) const;

private:
    const Json& value(const std::string& key) const;
    const Json& j_;
    std::string file_;
    std::string path_;
};

}  // namespace podsim
