#include "hardware/json_reader.hpp"

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

namespace podsim {

Json load_json_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw InputError(path, "$", "cannot open file");
    std::stringstream ss;
    ss << in.rdbuf();
    try {
        return Json::parse(ss.str());
    } catch (const Json::parse_error& e) {
        throw InputError(path, "$", std::string("malformed JSON: ") + e.what());
    }
}

JsonObject::JsonObject(const Json& j, std::string file, std::string path)
    : j_(j), file_(std::move(file)), path_(std::move(path)) {
    if (!j_.is_object()) throw InputError(file_, path_, "expected a JSON object");
}

bool JsonObject::has(const std::string& key) const { return j_.contains(key) && !j_.at(key).is_null(); }

void JsonObject::fail(const std::string& key, const std::string& expected) const {
    throw InputError(file_, at_path(key), expected);
}

const Json& JsonObject::value(const std::string& key) const {
    if (!j_.contains(key)) fail(key, "missing required field");
    return j_.at(key);
}

double JsonObject::number(const std::string& key) const {
    const Json& v = value(key);
    if (!v.is_number()) fail(key, "expected a number");
    double d = v.get<double>();
    if (!std::isfinite(d)) fail(key, "expected a finite number");
    return d;
}

double JsonObject::positive(const std::string& key) const {
    double d = number(key);
    if (!(d > 0)) fail(key, "expected a number > 0");
    return d;
}

double JsonObject::non_negative(const std::string& key) const {
    double d = number(key);
    if (d < 0) fail(key, "expected a number >= 0");
    return d;
}

std::optional<double> JsonObject::opt_number(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    return number(key);
}

long long JsonObject::integer(const std::string& key) const {
    const Json& v = value(key);
    if (v.is_number_integer()) return v.get<long long>();
    if (v.is_number_float()) {
        double d = v.get<double>();
        if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e15) return static_cast<long long>(d);
    }
    fail(key, "expected an integer");
}

long long JsonObject::positive_int(const std::string& key) const {
    long long v = integer(key);
    if (v < 1) fail(key, "expected an integer >= 1");
    return v;
}

std::optional<long long> JsonObject::opt_int(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    return integer(key);
}

std::string JsonObject::string(const std::string& key) const {
    const Json& v = value(key);
    if (!v.is_string()) fail(key, "expected a string");
    return v.get<std::string>();
}

std::optional<std::string> JsonObject::opt_string(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    return string(key);
}

bool JsonObject::boolean(const std::string& key) const {
    const Json& v = value(key);
    if (!v.is_boolean()) fail(key, "expected true or false");
    return v.get<bool>();
}

std::optional<bool> JsonObject::opt_bool(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    return boolean(key);
}

std::string JsonObject::one_of(const std::string& key, std::initializer_list<const char*> allowed) const {
    std::string s = string(key);
    std::string list;
    for (const char* a : allowed) {
        if (s == a) return s;
        list += list.empty() ? "" : "|";
        list += a;
    }
    fail(key, "expected one of " + list + ", got \"" + s + "\"");
}

JsonObject JsonObject::object(const std::string& key) const {
    const Json& v = value(key);
    if (!v.is_object()) fail(key, "expected a JSON object");
    return JsonObject(v, file_, at_path(key));
}

std::optional<JsonObject> JsonObject::opt_object(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    return object(key);
}

std::vector<std::string> JsonObject::string_array(const std::string& key) const {
    const Json& v = array(key);
    std::vector<std::string> out;
    for (size_t i = 0; i < v.size(); ++i) {
        if (!v[i].is_string()) throw InputError(file_, at_path(key) + "[" + std::to_string(i) + "]", "expected a string");
        out.push_back(v[i].get<std::string>());
    }
    return out;
}

const Json& JsonObject::array(const std::string& key) const {
    const Json& v = value(key);
    if (!v.is_array()) fail(key, "expected a JSON array");
    return v;
}

void JsonObject::only_keys(std::initializer_list<const char*> allowed) const {
    std::set<std::string> ok(allowed.begin(), allowed.end());
    for (auto it = j_.begin(); it != j_.end(); ++it) {
        if (!ok.count(it.key())) fail(it.key(), "unknown field (check the spelling)");
    }
}

}  // namespace podsim
