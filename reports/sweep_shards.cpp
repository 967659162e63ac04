#include "reports/sweep_shards.hpp"

#include <cstdint>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "hardware/input_error.hpp"

namespace podsim {

namespace {

// FNV-1a, 64 bits: enough to tell two sweep files (or two podsim versions' output heads) apart; not a security hash.
std::string fingerprint(const std::string& bytes) {
    std::uint64_t h = 1469598103934665603ULL;
    for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ULL;
    return fmt::format("{:016x}", h);
}

}  // namespace

ShardSpec parse_shard(const std::string& text) {
    const auto slash = text.find('/');
    auto whole = [&](const std::string& part, const char* what) {
        if (part.empty() || part.size() > 6 || part.find_first_not_of("0123456789") != std::string::npos)
            throw std::invalid_argument(fmt::format("expected K/N with whole numbers, got \"{}\" ({})", text, what));
        return std::stoi(part);
    };
    if (slash == std::string::npos) throw std::invalid_argument("expected K/N (shard K of N, K from 0), got \"" + text + "\"");
    ShardSpec s{whole(text.substr(0, slash), "K"), whole(text.substr(slash + 1), "N")};
    if (s.count < 1 || s.index >= s.count)
        throw std::invalid_argument(fmt::format("expected 0 <= K < N, got {}/{}", s.index, s.count));
    return s;
}

bool in_shard(const ShardSpec& s, size_t point) { return point % static_cast<size_t>(s.count) == static_cast<size_t>(s.index); }

nlohmann::json sweep_shard_json(const Sweep& s, const std::string& sweep_bytes, const ShardSpec& shard,
                                const std::vector<size_t>& indices, const std::vector<SweepRow>& rows) {
    nlohmann::json head = sweep_json_head(s);
    nlohmann::json j;
    j["kind"] = "podsim-sweep-shard";
    j["fingerprint"] = fingerprint(sweep_bytes + "\n" + head.dump() + "\n" + sweep_csv_header(s));
    j["shard"] = {{"index", shard.index}, {"count", shard.count}};
    j["points_total"] = s.points.size();
    j["csv_header"] = sweep_csv_header(s);
    j["json_head"] = std::move(head);
    j["rows"] = nlohmann::json::array();
    for (size_t i = 0; i < rows.size(); ++i)
        j["rows"].push_back({{"index", indices[i]}, {"csv", sweep_csv_row(s, rows[i])}, {"point", sweep_point_json(rows[i])}});
    return j;
}

MergedSweep merge_sweep_shards(const std::vector<std::string>& files, const std::vector<nlohmann::json>& shards) {
    if (shards.empty()) throw InputError("(no files)", "$", "at least one shard file");
    MergedSweep m;
    std::string fp, header;
    nlohmann::json head;
    long long count = -1, total = -1;
    std::map<long long, const nlohmann::json*> rows;
    std::map<long long, std::string> shard_file;
    for (size_t f = 0; f < shards.size(); ++f) {
        const nlohmann::json& j = shards[f];
        const std::string& file = files[f];
        auto need = [&](const char* key, nlohmann::json::value_t t1, nlohmann::json::value_t t2, const char* what) {
            if (!j.is_object() || !j.contains(key) || (j[key].type() != t1 && j[key].type() != t2))
                throw InputError(file, std::string("$.") + key, what);
            return &j[key];
        };
        using T = nlohmann::json::value_t;
        if (!j.is_object() || j.value("kind", "") != "podsim-sweep-shard")
            throw InputError(file, "$.kind", "\"podsim-sweep-shard\" (a file written by podsim sweep --shard K/N --json)");
        const std::string this_fp = need("fingerprint", T::string, T::string, "the sweep's fingerprint")->get<std::string>();
        const auto* sh = need("shard", T::object, T::object, "{\"index\": K, \"count\": N}");
        if (!sh->contains("index") || !(*sh)["index"].is_number_unsigned() || !sh->contains("count") ||
            !(*sh)["count"].is_number_unsigned() || (*sh)["count"].get<long long>() < 1 ||
            (*sh)["index"].get<long long>() >= (*sh)["count"].get<long long>())
            throw InputError(file, "$.shard", "{\"index\": K, \"count\": N} with 0 <= K < N");
        const long long this_total =
            need("points_total", T::number_unsigned, T::number_unsigned, "the sweep's number of points")->get<long long>();
        const std::string this_header = need("csv_header", T::string, T::string, "the CSV header")->get<std::string>();
        const auto* this_head = need("json_head", T::object, T::object, "the JSON output's head");
        if (f == 0) {
            fp = this_fp, header = this_header, head = *this_head;
            count = (*sh)["count"].get<long long>(), total = this_total;
        } else if (this_fp != fp || this_total != total || (*sh)["count"].get<long long>() != count ||
                   this_header != header || *this_head != head) {
            throw InputError(file, "$.fingerprint",
                             fmt::format("a shard of the same sweep and shard count as {} ({} of {} shards, "
                                         "fingerprint {})", files[0], total, count, fp));
        }
        const long long index = (*sh)["index"].get<long long>();
        if (shard_file.count(index))
            throw InputError(file, "$.shard.index", fmt::format("shard {} once; {} has it too", index, shard_file[index]));
        shard_file[index] = file;
        const auto* rs = need("rows", T::array, T::array, "the shard's rows");
        for (size_t r = 0; r < rs->size(); ++r) {
            const nlohmann::json& row = (*rs)[r];
            const std::string at = fmt::format("$.rows[{}]", r);
            if (!row.is_object() || !row.contains("index") || !row["index"].is_number_unsigned() ||
                !row.contains("csv") || !row["csv"].is_string() || !row.contains("point") || !row["point"].is_object())
                throw InputError(file, at, "{\"index\": i, \"csv\": line, \"point\": {...}}");
            const long long i = row["index"].get<long long>();
            if (i >= total || i % count != index)
                throw InputError(file, at + ".index", fmt::format("a point of shard {}/{} below {}", index, count, total));
            if (rows.count(i)) throw InputError(file, at + ".index", fmt::format("point {} once", i));
            rows[i] = &row;
        }
    }
    if (static_cast<long long>(shard_file.size()) != count) {
        std::string missing;
        for (long long k = 0; k < count; ++k)
            if (!shard_file.count(k)) missing += (missing.empty() ? "" : ", ") + std::to_string(k);
        throw InputError(files[0], "$.shard.count", fmt::format("all {} shards; missing {}", count, missing));
    }
    if (static_cast<long long>(rows.size()) != total)
        throw InputError(files[0], "$.points_total", fmt::format("{} points in all, the shards hold {}", total, rows.size()));
    m.csv = header;
    nlohmann::json out = head;
    out["points"] = nlohmann::json::array();
    for (const auto& [i, row] : rows) {
        m.csv += (*row)["csv"].get<std::string>();
        out["points"].push_back((*row)["point"]);
    }
    m.json = out.dump(2) + "\n";
    m.points = rows.size(), m.shards = shard_file.size();
    return m;
}

}  // namespace podsim
