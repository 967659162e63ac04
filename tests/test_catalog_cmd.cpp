// podsim catalog: the registry made visible. Its JSON parses, carries every chip's per-precision peaks and every
// system's NVLink domain, and its prices say, per option, a number, null (not known) or "not offered".
#include <doctest/doctest.h>

#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "hardware/input_error.hpp"
#include "hardware/price.hpp"
#include "tests/helpers.hpp"

using nlohmann::json;

TEST_CASE("podsim catalog --format json: chips with per-precision peaks, systems, prices, frameworks") {
    const auto r = podsim::test::run_podsim("catalog --format json");
    REQUIRE(r.exit_code == 0);
    const json j = json::parse(r.out);
    CHECK(j.at("schema_version") == 1);
    std::set<std::string> chips;
    for (const auto& c : j.at("chips")) {
        chips.insert(c.at("id").get<std::string>());
        for (const char* k : {"peak_bf16_flops_per_s", "peak_fp8_flops_per_s", "peak_int8_ops_per_s",
                              "peak_fp4_flops_per_s", "hbm_bytes", "hbm_bytes_per_s"})
            CHECK_MESSAGE(c.contains(k), c.at("id").get<std::string>() << " lacks " << k);
    }
    for (const char* id : {"h200-sxm", "b200", "b300", "gb200", "gb300", "tpu-v6e", "tpu7x"}) CHECK(chips.count(id));
    std::map<std::string, int> domain;
    for (const auto& s : j.at("systems"))
        if (s.at("kind") == "gpu_node") domain[s.at("id")] = s.at("nvlink_domain_gpus");
    CHECK(domain.at("a4x-highgpu-4g") == 72);
    CHECK(domain.at("gb200-nvl72") == 72);
    CHECK(domain.at("a3-megagpu-8g") == 8);
    // Every price option is a number > 0, null, or "not offered"; every cloud system has an entry in >= 3 regions.
    std::map<std::string, std::set<std::string>> regions;
    for (const auto& p : j.at("prices")) {
        regions[p.at("sku")].insert(p.at("region"));
        for (const char* k : {"on_demand_usd", "spot_usd", "commit_1y_usd", "commit_3y_usd"}) {
            const auto& v = p.at(k);
            CHECK((v.is_null() || (v.is_number() && v.get<double>() > 0) || v == "not offered"));
        }
    }
    for (const char* sku : {"a3-highgpu-8g", "a3-megagpu-8g", "a4-highgpu-8g", "a4x-highgpu-4g", "tpu-v5e", "tpu-v5p",
                            "tpu-v6e", "tpu7x"})
        CHECK_MESSAGE(regions[sku].size() >= 3, sku);
    CHECK(j.at("frameworks").size() >= 10);
}

TEST_CASE("podsim catalog: an unknown section is a usage error listing the sections") {
    const auto r = podsim::test::run_podsim("catalog gpus");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("chips, systems, prices or frameworks") != std::string::npos);
    CHECK(r.out.empty());
}

TEST_CASE("prices: \"not offered\" is not a missing price; any other string is an error at its path") {
    const auto ps = podsim::prices_from_json(podsim::JsonObject(json::parse(R"({"schema_version":1,"provider":"gcp",
        "currency":"USD","entries":[{"sku":"x","unit":"vm_hour","region":"r","on_demand_usd":"not offered",
        "spot_usd":null,"commit_1y_usd":2,"commit_3y_usd":1,"source":"s","source_date":"d"}]})"), "p.json", "$"));
    REQUIRE(ps.size() == 1);
    CHECK_FALSE(ps[0].offered(podsim::PriceOption::on_demand));
    CHECK(ps[0].offered(podsim::PriceOption::spot));
    CHECK_FALSE(ps[0].usd(podsim::PriceOption::spot).has_value());
    CHECK(*ps[0].usd(podsim::PriceOption::commit_1y) == 2);
    try {
        podsim::prices_from_json(podsim::JsonObject(json::parse(R"({"schema_version":1,"provider":"gcp",
            "currency":"USD","entries":[{"sku":"x","unit":"vm_hour","region":"r","on_demand_usd":"cheap",
            "source":"s","source_date":"d"}]})"), "p.json", "$"));
        FAIL("expected an InputError");
    } catch (const podsim::InputError& e) {
        CHECK(std::string(e.what()).find("$.entries[0].on_demand_usd") != std::string::npos);
    }
}
