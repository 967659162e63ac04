#include "hardware/json_reader.hpp"

#include <cmath>
#include <cstdio>
#include <climits>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace podsim {

Json parse_json_text(const std::string& text, const std::string& file) {
    if (static_cast<long long>(text.size()) > max_json_file_bytes)
        throw InputError(file, "$", "file too large: " + std::to_string(text.size()) + " bytes, at most " +
                                        std::to_string(max_json_file_bytes) + " accepted");
    try {
        return Json::parse(text);
    } catch (const Json::parse_error& e) {
        throw InputError(file, "$", std::string("malformed JSON: ") + e.what());
    } catch (const Json::exception& e) {  // out_of_range: a number no double holds (1e400)
        throw InputError(file, "$", std::string("unreadable JSON: ") + e.what());
    }
}

Json load_json_file(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw InputError(path, "$", "is a directory, expected a JSON file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, "$", "cannot open file");
    std::string text;
    char buf[1 << 16];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
        text.append(buf, static_cast<size_t>(in.gcount()));
        if (static_cast<long long>(text.size()) > max_json_file_bytes) break;  // reported by parse_json_text
    }
    if (in.bad()) throw InputError(path, "$", "cannot read file");
    return parse_json_text(text, path);
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
    if (v.is_number_unsigned() && v.get<unsigned long long>() > static_cast<unsigned long long>(LLONG_MAX))
        fail(key, "expected an integer (this one does not fit in 64 bits)");
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

namespace {
std::string range_text(long long lo, long long hi) {
    return "expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
}
}  // namespace

long long JsonObject::int_in(const std::string& key, long long lo, long long hi) const {
    const Json& v = value(key);
    bool ok = false;
    long long x = 0;
    if (v.is_number_unsigned()) {
        const auto u = v.get<unsigned long long>();
        ok = u <= static_cast<unsigned long long>(LLONG_MAX);
        x = ok ? static_cast<long long>(u) : 0;
    } else if (v.is_number_integer()) {
        ok = true, x = v.get<long long>();
    } else if (v.is_number_float()) {
        const double d = v.get<double>();
        ok = std::isfinite(d) && d == std::floor(d) && d >= double(lo) && d <= double(hi);
        x = ok ? static_cast<long long>(d) : 0;
    }
    if (!ok || x < lo || x > hi) fail(key, range_text(lo, hi));
    return x;
}

long long JsonObject::int_in(const std::string& key, long long lo, long long hi, long long otherwise) const {
    return has(key) ? int_in(key, lo, hi) : otherwise;
}

int JsonObject::count(const std::string& key, long long lo, long long hi) const {
    return static_cast<int>(int_in(key, lo, std::min<long long>(hi, INT_MAX)));
}

int JsonObject::count(const std::string& key, long long lo, long long hi, int otherwise) const {
    return has(key) ? count(key, lo, hi) : otherwise;
}

double JsonObject::number_in(const std::string& key, double lo, double hi) const {
    const double d = number(key);
    if (!(d >= lo && d <= hi)) {
        char buf[128];
        std::snprintf(buf, sizeof buf, "expected a number from %g to %g", lo, hi);
        fail(key, buf);
    }
    return d;
}

double JsonObject::number_in(const std::string& key, double lo, double hi, double otherwise) const {
    return has(key) ? number_in(key, lo, hi) : otherwise;
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
