// The hardware catalog: every shipped file loads, figures are sourced, slices are shaped as the Cloud docs say.
#include <doctest/doctest.h>

#include <filesystem>
#include <algorithm>
#include <functional>

#include "hardware/names.hpp"
#include "placement/placement.hpp"
#include "tests/helpers.hpp"

using namespace podsim;
using podsim::test::approx;
using podsim::test::catalog;

TEST_CASE("the catalog holds the chips, GPU machines and prices the planner needs") {
    for (const char* c : {"tpu-v3", "tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e", "a100-sxm-40gb", "a100-sxm-80gb",
                          "h100-sxm", "h200-sxm", "b200", "h800-sxm"})
        CHECK_MESSAGE(catalog().find_chip(c) != nullptr, c);
    for (const char* n : {"a2-ultragpu-8g", "a3-highgpu-8g", "a3-megagpu-8g", "a3-ultragpu-8g", "a4-highgpu-8g",
                          "dgx-a100", "dgx-h100"})
        CHECK_MESSAGE(catalog().find_node(n) != nullptr, n);
    // Validation names resolve through aliases.
    CHECK(catalog().find_chip("A100-SXM4-80GB")->id == "a100-sxm-80gb");
    CHECK(catalog().find_chip("TPU-v5p")->id == "tpu-v5p");
    for (const char* sku : {"tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e", "a3-highgpu-8g", "a3-megagpu-8g"}) {
        const PriceEntry* p = catalog().price_for(sku);
        REQUIRE_MESSAGE(p != nullptr, sku);
        CHECK(p->on_demand_usd.has_value());
        CHECK(!p->source_date.empty());
    }
}

TEST_CASE("peak figures match the vendor pages") {
    CHECK(catalog().find_chip("tpu-v4")->peak_bf16_flops_per_s == approx(275e12));
    CHECK(catalog().find_chip("tpu-v5p")->peak_bf16_flops_per_s == approx(459e12));
    CHECK(catalog().find_chip("h100-sxm")->peak_fp8_flops_per_s == approx(1979e12));
    CHECK(catalog().find_chip("a100-sxm-80gb")->hbm_bytes_per_s == approx(2039e9));
}

TEST_CASE("v4 and v5p accelerator types count TensorCores, v5e and v6e count chips") {
    auto v4 = catalog().tpu_system("v4-2048", 1, "t", "$");
    CHECK(v4.chips == 1024);
    CHECK(v4.torus_dims == std::vector<int>{8, 8, 16});
    CHECK(v4.wraps == std::vector<bool>{true, true, true});  // whole 4x4x4 cubes: torus on every axis
    auto small = catalog().tpu_system("v4-32", 1, "t", "$");
    CHECK(small.chips == 16);
    CHECK(small.wraps == std::vector<bool>{false, false, false});  // under a cube: mesh
    auto v5e = catalog().tpu_system("v5e-256", 1, "t", "$");
    CHECK(v5e.chips == 256);
    CHECK(v5e.wraps == std::vector<bool>{true, true});
    CHECK(catalog().tpu_system("v5litepod-16", 1, "t", "$").wraps == std::vector<bool>{false, false});
    auto multi = catalog().tpu_system("v5p-1024", 4, "t", "$");
    CHECK(multi.chips == 2048);
}

TEST_CASE("unknown or impossible accelerator types are errors naming the file and path") {
    CHECK_THROWS_WITH_AS(catalog().tpu_system("v9-64", 1, "s.json", "$.system.accelerator_type"),
                         doctest::Contains("s.json: $.system.accelerator_type: unknown TPU generation"), InputError);
    CHECK_THROWS_WITH_AS(catalog().tpu_system("v4-100", 1, "s.json", "$.x"), doctest::Contains("no such slice"),
                         InputError);
    CHECK_THROWS_WITH_AS(catalog().gpu_system("a9-supergpu", 2, "s.json", "$.x"),
                         doctest::Contains("unknown machine type"), InputError);
}

TEST_CASE("chips and machines are found by the names makers, clouds and papers use") {
    // Case, '-', '_', ' ' and '.' do not matter; the alias table maps marketing and paper names to ids.
    const std::pair<const char*, const char*> names[] = {
        {"H100-SXM5-80GB", "h100-sxm"}, {"h100 sxm5 80gb", "h100-sxm"}, {"H100_SXM", "h100-sxm"},
        {"B200", "b200"},               {"GB200", "gb200"},             {"gb200-nvl72", "gb200"},
        {"TPU-v6e", "tpu-v6e"},         {"Trillium", "tpu-v6e"},        {"ironwood", "tpu7x"},
        {"TPU7x", "tpu7x"},             {"tpu v7", "tpu7x"},            {"Blackwell Ultra", "b300"},
        {"H200", "h200-sxm"}};
    for (const auto& entry : names) {  // not a structured binding: clang 14 cannot capture one in doctest's lambda
        const char* name = entry.first;
        const ChipSpec* c = catalog().find_chip(name);
        REQUIRE_MESSAGE(c != nullptr, name);
        CHECK_MESSAGE(c->id == entry.second, name);
    }
    CHECK(catalog().find_node("A4X-HighGPU-4G") == catalog().find_node("a4x-highgpu-4g"));
    CHECK(catalog().find_chip("") == nullptr);
    CHECK(catalog().find_chip("B2000") == nullptr);  // no prefix matching: a near name is not a match
}

TEST_CASE("an unknown name lists the nearest known ones") {
    CHECK(edit_distance("kitten", "sitting") == 3);
    CHECK(edit_distance("", "abc") == 3);
    CHECK(normal_name("H100-SXM5_80 GB") == "h100sxm580gb");
    // One edit away from b200 (and contained in gb200): both suggested, nothing unrelated.
    const std::string hint = catalog().chip_hint("B201");
    CHECK(hint.find("b200") != std::string::npos);
    CHECK(hint.find("tpu-v4") == std::string::npos);
    CHECK(catalog().chip_hint("zzzzzzzzzzzz").empty());
    CHECK_THROWS_WITH_AS(catalog().gpu_system("a4x-highgpu-8g", 2, "s.json", "$.system.machine_type"),
                         doctest::Contains("a4x-highgpu-4g, "), InputError);
    CHECK_THROWS_WITH_AS(catalog().tpu_system("v6-256", 1, "s.json", "$.system.accelerator_type"),
                         doctest::Contains("nearest known: v6e"), InputError);
    // A published run naming an unknown chip gets the same hint (through the CLI in test_cli).
}

TEST_CASE("two catalog entries answering to one name are refused at load") {
    const std::string dir = podsim::test::temp_dir() + "/dup_catalog";
    std::filesystem::remove_all(dir);
    std::filesystem::copy(PODSIM_CATALOG_DIR_FOR_TESTS, dir, std::filesystem::copy_options::recursive);
    Json b300 = load_json_file(dir + "/chips/b300.json");
    b300["aliases"].push_back("b-200");  // normalises to b200's id
    podsim::test::write_file(dir + "/chips/b300.json", b300.dump(1));
    CHECK_THROWS_WITH_AS(Catalog::load(dir), doctest::Contains("already names \"b200\""), InputError);
    std::filesystem::remove_all(dir);
}

TEST_CASE("a figure without a source is rejected") {
    Json chip = load_json_file(std::string(PODSIM_CATALOG_DIR_FOR_TESTS) + "/chips/h100-sxm.json");
    chip["sources"].erase("hbm_bytes_per_s");
    CHECK_THROWS_WITH_AS(chip_from_json(JsonObject(chip, "h100.json", "$")), doctest::Contains("hbm_bytes_per_s"),
                         InputError);
    Json typo = load_json_file(std::string(PODSIM_CATALOG_DIR_FOR_TESTS) + "/chips/h100-sxm.json");
    typo["hbm_bytes_per_sec"] = 1;
    CHECK_THROWS_WITH_AS(chip_from_json(JsonObject(typo, "h100.json", "$")), doctest::Contains("unknown field"),
                         InputError);
}

TEST_CASE("the flash backward rate: a fraction in (0, 1], 1 where a chip states none") {
    const std::string path = std::string(PODSIM_CATALOG_DIR_FOR_TESTS) + "/chips/h100-sxm.json";
    Json chip = load_json_file(path);
    CHECK(chip_from_json(JsonObject(chip, "h100.json", "$")).eff.attention_backward_rate == doctest::Approx(0.86));
    chip["efficiency"]["attention_backward_rate"] = 1.2;
    CHECK_THROWS_WITH_AS(chip_from_json(JsonObject(chip, "h100.json", "$")),
                         doctest::Contains("$.efficiency.attention_backward_rate"), InputError);
    chip["efficiency"].erase("attention_backward_rate");
    chip["sources"].erase("efficiency.attention_backward_rate");
    CHECK(chip_from_json(JsonObject(chip, "h100.json", "$")).eff.attention_backward_rate == 1.0);
}

TEST_CASE("group placement: TP inside the NVLink domain, DP across rails; TPU groups take torus axes") {
    auto dgx = catalog().gpu_system("dgx-h100", 16, "t", "$");
    // Layout tp, cp, dp, pp = 8, 1, 16, 1: TP is one node, DP one GPU per node over its own NIC.
    auto tp = place_group(dgx, {8, 1, 16, 1}, 0);
    REQUIRE(tp.levels.size() == 1);
    CHECK(tp.levels[0].name == "NVLink");
    auto dp = place_group(dgx, {8, 1, 16, 1}, 2);
    REQUIRE(dp.levels.size() == 1);
    CHECK(dp.levels[0].size == 16);
    CHECK(dp.levels[0].bytes_per_s == approx(50e9 * 0.92));
    // TP 4 leaves two DP ranks per node: NVLink level of 2, then 8 nodes over the NICs.
    auto dp2 = place_group(dgx, {4, 1, 32, 1}, 2);
    REQUIRE(dp2.levels.size() == 2);
    CHECK(dp2.levels[0].size == 2);
    CHECK(dp2.levels[1].size == 16);

    auto v5p = catalog().tpu_system("v5p-128", 1, "t", "$");  // 4x4x4 torus
    auto t4 = place_group(v5p, {4, 1, 1, 16}, 0);
    REQUIRE(t4.levels.size() == 1);
    // One wrapped axis: a bidirectional ring, two links' worth.
    CHECK(t4.levels[0].bytes_per_s == approx(2 * 100e9 * 0.9));
    auto f16 = place_group(v5p, {4, 1, 1, 16}, 3);
    CHECK(f16.levels[0].bytes_per_s == approx(4 * 100e9 * 0.9));
    auto bad = place_group(v5p, {3, 1, 1, 21}, 0);  // 3 does not divide any axis
    CHECK_FALSE(bad.placeable);
}

TEST_CASE("a part cut from another chip's die takes that chip's fitted fractions of peak; a bad silicon_of names its path") {
    const ChipSpec* h100 = catalog().find_chip("h100-sxm");
    const ChipSpec* part = catalog().find_chip("H100 96GB HBM2e 500W");
    REQUIRE(h100 != nullptr);
    REQUIRE(part != nullptr);
    CHECK(part->silicon_of == "h100-sxm");
    CHECK(part->peak_bf16_flops_per_s < h100->peak_bf16_flops_per_s);  // its own peaks: a lower power limit
    CHECK(part->hbm_bytes_per_s == approx(2.4e12));
    REQUIRE(!h100->profiles.empty());
    // Every precision H100 has a fit for: borrowed, unless the part has its own fit for it (its 16-bit one, fitted on
    // TorchTitan's Grand Teton bf16 runs), which wins.
    for (const EfficiencyProfile& h : h100->profiles) {
        auto mine = std::find_if(part->profiles.begin(), part->profiles.end(),
                                 [&](const EfficiencyProfile& q) { return q.precision == h.precision; });
        REQUIRE(mine != part->profiles.end());
        CHECK(std::count_if(part->profiles.begin(), part->profiles.end(),
                            [&](const EfficiencyProfile& q) { return q.precision == h.precision; }) == 1);
        if (mine->fitted_chip == "h100-sxm") {
            CHECK(mine->matmul_peak_fraction == h.matmul_peak_fraction);
            CHECK(mine->method.find("; fitted on h100-sxm, the same silicon") != std::string::npos);
        } else {
            CHECK(mine->fitted_chip == "h100-sxm-96gb-500w");
            CHECK(mine->method.find("the same silicon") == std::string::npos);
        }
    }
    auto fitted_on = [&](const char* precision) {
        for (const EfficiencyProfile& q : part->profiles)
            if (q.precision == precision) return q.fitted_chip;
        return std::string("none");
    };
    CHECK(fitted_on("fp8") == "h100-sxm");
    CHECK(fitted_on("16bit") == "h100-sxm-96gb-500w");
    CHECK(catalog().find_chip("h200-sxm")->profiles.size() == h100->profiles.size());
    CHECK(catalog().find_chip("b200")->profiles.empty());  // another die: nothing borrowed

    // A copy of the catalog with its profiles, edited one way at a time.
    const std::string root = podsim::test::temp_dir() + "/silicon_catalog";
    auto load_edited = [&](const std::function<void(const std::string&)>& edit) {
        std::filesystem::remove_all(root);
        std::filesystem::create_directories(root);
        std::filesystem::copy(PODSIM_CATALOG_DIR_FOR_TESTS, root + "/catalog", std::filesystem::copy_options::recursive);
        std::filesystem::copy(std::string(PODSIM_CATALOG_DIR_FOR_TESTS) + "/../profiles", root + "/profiles",
                              std::filesystem::copy_options::recursive);
        edit(root);
        return Catalog::load(root + "/catalog");
    };
    auto set_silicon = [&](const char* chip, const char* of) {
        return [=](const std::string& dir) {
            const std::string f = dir + "/catalog/chips/" + chip + ".json";
            Json j = load_json_file(f);
            j["silicon_of"] = of;
            podsim::test::write_file(f, j.dump(1));
        };
    };
    for (const char* bad : {"h100-sxm-96gb-500w", "h100-sxm-9000", "H100"})  // itself, unknown, an alias not an id
        CHECK_THROWS_WITH_AS(load_edited(set_silicon("h100-sxm-96gb-500w", bad)),
                             doctest::Contains("h100-sxm-96gb-500w.json: $.silicon_of"), InputError);
    // No chains: h200 names the part, which names h100-sxm.
    CHECK_THROWS_WITH_AS(load_edited(set_silicon("h200-sxm", "h100-sxm-96gb-500w")),
                         doctest::Contains("h200-sxm.json: $.silicon_of"), InputError);
    // A part with its own fit for a precision keeps it and borrows the rest.
    const Catalog own = load_edited([](const std::string& dir) {
        Json p = load_json_file(dir + "/profiles/h100-sxm-fp8.json");
        p["chip"] = "h100-sxm-96gb-500w";
        p["matmul_peak_fraction"] = 0.4;
        podsim::test::write_file(dir + "/profiles/part-fp8.json", p.dump(1));
    });
    int fp8 = 0;
    for (const auto& p : own.find_chip("h100-sxm-96gb-500w")->profiles)
        if (p.precision == "fp8") {
            ++fp8;
            CHECK(p.matmul_peak_fraction == approx(0.4));
        }
    CHECK(fp8 == 1);
    std::filesystem::remove_all(root);
}
