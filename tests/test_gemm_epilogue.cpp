// A GEMM's epilogue (issue 12, efficiency from the shape of the work): on a chip whose GEMM kernels write each
// output tile after its K loop (Ampere), the output's write adds to the math; on chips whose kernels overlap it
// with the next tile (Hopper on, TPUs) it does not. The extra time is the output's 16-bit bytes over the streaming
// bandwidth, so it weighs most on a short contraction.
#include <doctest/doctest.h>

#include <algorithm>

#include "models/layer_ops.hpp"
#include "models/op_cost.hpp"
#include "tests/helpers.hpp"

using namespace podsim;
using podsim::test::approx;

namespace {

// h 4096, ffn 16384, one 2048-token micro-batch, no parallelism: mlp.up is 2048 x 16384 x 4096 (M x N x K) and
// mlp.down 2048 x 4096 x 16384, the same FLOPs with a quarter of the output.
ModelSpec dense_model() {
    ModelSpec m;
    m.name = "dense";
    m.layers = 8, m.hidden = 4096, m.ffn_hidden = 16384, m.heads = 32, m.kv_heads = 32, m.head_dim = 128;
    m.vocab = 32000, m.seq_len = 2048;
    m.position = Position::rope, m.dropout = false, m.bias = false;
    return m;
}

const Op& find_op(const std::vector<Op>& ops, const std::string& name) {
    const auto it = std::find_if(ops.begin(), ops.end(), [&](const Op& o) { return o.name == name; });
    REQUIRE_MESSAGE(it != ops.end(), name);
    return *it;
}

double op_s(const Op& o, const ChipSpec& chip, const ParallelPlan& p) {
    CostContext c;
    c.chip = &chip, c.plan = &p;
    return op_time_s(o, c);
}

}  // namespace

TEST_CASE("the catalog says which chips write GEMM outputs after the K loop: Ampere does, Hopper, Blackwell, TPUs don't") {
    for (const char* id : {"a100-sxm-80gb", "a100-sxm-40gb"})
        CHECK_MESSAGE(test::catalog().find_chip(id)->eff.gemm_epilogue_serial, id);
    for (const char* id : {"h100-sxm", "h200-sxm", "b200", "gb200", "tpu-v4", "tpu-v5p", "tpu7x", "host-cpu"})
        CHECK_MESSAGE(!test::catalog().find_chip(id)->eff.gemm_epilogue_serial, id);
}

TEST_CASE("a serial epilogue adds M x N x 2 bytes at the streaming bandwidth to a GEMM; an overlapped one adds none") {
    const ChipSpec& a100 = *test::catalog().find_chip("a100-sxm-80gb");
    REQUIRE(a100.eff.gemm_epilogue_serial);
    ChipSpec overlapped = a100;
    overlapped.eff.gemm_epilogue_serial = false;
    ParallelPlan p;
    p.micro_batch = 1, p.global_batch = 1;
    const LayerOps L = layer_ops(dense_model(), p);
    const double bw = a100.hbm_bytes_per_s * a100.eff.memory_bw_fraction;
    const Op& up = find_op(L.forward, "mlp.up");
    const Op& down = find_op(L.forward, "mlp.down");
    REQUIRE(up.flops == approx(down.flops));
    // mlp.up writes 2048 x 16384 bf16 elements (64 MiB): 39 us at 85% of 2,039 GB/s, 4.5% of its 0.87 ms of math.
    CHECK(op_s(up, a100, p) - op_s(up, overlapped, p) == approx(2048.0 * 16384 * 2 / bw));
    // mlp.down writes a quarter of that: the short-output GEMM pays a quarter of the epilogue.
    CHECK(op_s(down, a100, p) - op_s(down, overlapped, p) == approx(2048.0 * 4096 * 2 / bw));
    // Both passes of the backward pay theirs too: the input gradient of mlp.up is 2048 x 4096, its weight gradient
    // 4096 x 16384.
    const Op& dgrad = find_op(L.backward, "mlp.up.dgrad");
    const Op& wgrad = find_op(L.backward, "mlp.up.wgrad");
    CHECK(op_s(dgrad, a100, p) - op_s(dgrad, overlapped, p) == approx(2048.0 * 4096 * 2 / bw));
    CHECK(op_s(wgrad, a100, p) - op_s(wgrad, overlapped, p) == approx(4096.0 * 16384 * 2 / bw));
}
