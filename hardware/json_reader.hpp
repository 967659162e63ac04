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

// Parses a file; a syntax error becomes an InputError with the byte offset.
Json load_json_file(const std::string& path);

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
