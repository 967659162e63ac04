// Validation: podsim's collective model against published nccl-tests bus bandwidths
// (hardware/catalog/collectives/nccl_tests.json): within 10% on every entry, with either network backend.
#include <doctest/doctest.h>

#include <cmath>

#include "sim/nccl_reference.hpp"
#include "tests/helpers.hpp"

using namespace podsim;

TEST_CASE("NCCL all-reduce bus bandwidth within 10% of published nccl-tests runs") {
    const auto refs = load_nccl_references(default_nccl_reference_file(), test::catalog());
    REQUIRE(refs.size() >= 3);
    for (const auto& ref : refs) {
        for (NetworkBackend b : {NetworkBackend::analytical, NetworkBackend::simgrid}) {
            const NcclCheck k = check_nccl(ref, test::catalog(), b);
            CHECK_MESSAGE(std::abs(k.error()) <= 0.10,
                          ref.id << " (" << to_string(b) << "): predicted " << k.predicted_busbw_bytes_per_s / 1e9
                                 << " GB/s by " << k.predicted_algorithm << ", published "
                                 << ref.busbw_bytes_per_s / 1e9 << " GB/s");
        }
    }
}

TEST_CASE("nccl references: a bad entry is an error naming the file and JSON path") {
    const std::string dir = test::temp_dir();
    test::write_file(dir + "/n.json", R"({"schema_version":1,"entries":[{"id":"x","system":"no-such-node","gpus":8,
        "collective":"all_reduce","bytes":1e9,"busbw_bytes_per_s":1e11,"source":"s"}]})");
    try {
        load_nccl_references(dir + "/n.json", test::catalog());
        FAIL("expected an InputError");
    } catch (const InputError& e) {
        const std::string what = e.what();
        CHECK(what.find("n.json") != std::string::npos);
        CHECK(what.find("$.entries[0].system") != std::string::npos);
    }
}
