// A structure-aware mutator for the fuzz targets: most inputs podsim reads are JSON objects whose bugs hide behind
// values (a count near 2^31 or 2^32, a zero, a huge batch, an unusual schedule name), not behind broken syntax,
// which the reader rejects at once. Three times in four the input is parsed and one value changed, swapped,
// removed or added, then written back; otherwise (or when the input is not JSON) libFuzzer's byte mutations run.
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

using Json = nlohmann::json;

struct Leaf {
    Json* parent;  // object or array holding it
    std::string key;
    size_t index;
    Json* value;
};

void collect(Json& j, std::vector<Leaf>& leaves, std::vector<Json*>& objects) {
    if (j.is_object()) {
        objects.push_back(&j);
        for (auto it = j.begin(); it != j.end(); ++it) {
            leaves.push_back({&j, it.key(), 0, &it.value()});
            collect(it.value(), leaves, objects);
        }
    } else if (j.is_array()) {
        for (size_t i = 0; i < j.size(); ++i) {
            leaves.push_back({&j, {}, i, &j[i]});
            collect(j[i], leaves, objects);
        }
    }
}

// Strings and keys seen in inputs so far (the seeds' enum values and field names), to swap in elsewhere.
std::vector<std::string>& seen_strings() {
    static std::vector<std::string> v;
    return v;
}
std::vector<std::string>& seen_keys() {
    static std::vector<std::string> v;
    return v;
}
void remember(std::vector<std::string>& pool, const std::string& s, std::mt19937_64& rng) {
    if (s.size() > 40) return;
    if (pool.size() < 1024) pool.push_back(s);
    else pool[rng() % pool.size()] = s;
}

long long wrap(long long a, unsigned long long plus, unsigned long long minus) {
    return static_cast<long long>(static_cast<unsigned long long>(a) + plus - minus);
}

Json interesting_number(const Json& old, std::mt19937_64& rng) {
    static const long long ints[] = {0, -1, 1, 2, 3, 4, 7, 8, 16, 64, 128, 1000, 1024, 4096, 65536, 1 << 20,
                                     2147483647LL, 2147483648LL, 4294967295LL, 4294967296LL, 4294967424LL,
                                     1LL << 40, 1LL << 53, 1LL << 62, 9223372036854775807LL, -2147483648LL,
                                     (-9223372036854775807LL - 1)};
    static const double reals[] = {0.0, -0.0, 0.5, 1e-9, 1e-300, 1.25, 1e9, 1e12, 1e18, 1e300, -1.0, 0.999, 1.0001};
    const double v = old.is_number() ? old.get<double>() : 1.0;
    switch (rng() % 6) {
        case 0: return ints[rng() % std::size(ints)];
        case 1: return reals[rng() % std::size(reals)];
        case 2: return static_cast<long long>(rng() % 4097);
        // Wrapping arithmetic in unsigned: the mutator itself must not overflow.
        case 3: return old.is_number_integer() ? Json(wrap(old.get<long long>(), rng() % 5, 2)) : Json(v * 2);
        case 4: return old.is_number_integer() ? Json(wrap(old.get<long long>(), old.get<long long>(), 0)) : Json(v / 2);
        default: return wrap(static_cast<long long>(1ULL << (rng() % 64)), rng() % 3, 1);
    }
}

bool mutate_json(Json& j, std::mt19937_64& rng) {
    std::vector<Leaf> leaves;
    std::vector<Json*> objects;
    collect(j, leaves, objects);
    for (const auto& l : leaves) {
        if (!l.key.empty()) remember(seen_keys(), l.key, rng);
        if (l.value->is_string()) remember(seen_strings(), l.value->get<std::string>(), rng);
    }
    if (leaves.empty()) return false;
    Leaf& l = leaves[rng() % leaves.size()];
    Json& v = *l.value;
    switch (rng() % 10) {
        case 0:  // remove the field or element
            if (l.parent->is_object()) l.parent->erase(l.key);
            else l.parent->erase(l.index);
            return true;
        case 1:  // add a known field to some object, with a copy of some value
            if (!objects.empty() && !seen_keys().empty()) {
                Json* o = objects[rng() % objects.size()];
                (*o)[seen_keys()[rng() % seen_keys().size()]] = *leaves[rng() % leaves.size()].value;
                return true;
            }
            return false;
        case 2:  // another type
            switch (rng() % 5) {
                case 0: v = nullptr; break;
                case 1: v = Json::object(); break;
                case 2: v = Json::array(); break;
                case 3: v = "x"; break;
                default: v = (rng() & 1) != 0; break;
            }
            return true;
        case 3:  // duplicate an array element
            if (l.parent->is_array()) {
                l.parent->push_back(*l.value);
                return true;
            }
            [[fallthrough]];
        default:
            if (v.is_number()) v = interesting_number(v, rng);
            else if (v.is_string() && !seen_strings().empty()) v = seen_strings()[rng() % seen_strings().size()];
            else if (v.is_boolean()) v = !v.get<bool>();
            else if (v.is_array() && !v.empty()) v.erase(rng() % v.size());
            else v = interesting_number(v, rng);
            return true;
    }
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
    std::mt19937_64 rng(seed);
    if (rng() % 4 != 0) {
        Json j = Json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
        if (!j.is_discarded() && mutate_json(j, rng)) {
            if (rng() % 3 == 0) mutate_json(j, rng);  // sometimes two changes
            const std::string out = j.dump(1);
            if (out.size() <= max_size) {
                std::memcpy(data, out.data(), out.size());
                return out.size();
            }
        }
    }
    return LLVMFuzzerMutate(data, size, max_size);
}
