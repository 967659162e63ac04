// The discrete-event engine on graphs small enough to solve by hand, and the collective cost formulas.
#include <doctest/doctest.h>

#include "tests/helpers.hpp"

#include "sim/collectives.hpp"
#include "sim/engine.hpp"

using namespace podsim;
using podsim::test::approx;

namespace {
CostClass cls(double s) {
    CostClass c;
    c.duration_s = s;
    c.parts_s[0] = s;
    return c;
}
}  // namespace

TEST_CASE("tasks on one stream run back to back; a dependency on another stream waits for it") {
    TaskGraph g;
    auto a = g.add_stream("a"), b = g.add_stream("b");
    auto one = g.add_cost_class(cls(1.0)), two = g.add_cost_class(cls(2.0));
    auto t0 = g.add_task(a, one);
    auto t1 = g.add_task(a, two);  // 1..3
    auto t2 = g.add_task(b, one);  // waits for t1: 3..4
    g.add_dependency(t1, t2);
    (void)t0;
    auto r = run_engine(g, {true});
    CHECK(r.makespan_s == approx(4.0));
    CHECK(r.streams[a].busy_s == approx(3.0));
    CHECK(r.streams[b].first_start_s == approx(3.0));
}

TEST_CASE("independent streams overlap") {
    TaskGraph g;
    auto a = g.add_stream("a"), b = g.add_stream("b");
    auto c = g.add_cost_class(cls(5.0));
    g.add_task(a, c);
    g.add_task(b, c);
    CHECK(run_engine(g).makespan_s == approx(5.0));
}

TEST_CASE("a cycle is reported, not hung on") {
    TaskGraph g;
    auto a = g.add_stream("a"), b = g.add_stream("b");
    auto c = g.add_cost_class(cls(1.0));
    auto x = g.add_task(a, c), y = g.add_task(b, c);
    g.add_dependency(x, y);
    g.add_dependency(y, x);
    CHECK_THROWS_AS(run_engine(g), std::logic_error);
}

TEST_CASE("ring all-reduce over one level: 2 (n-1)/n S / B plus 2 (n-1) latency steps") {
    GroupNetwork net;
    net.levels.push_back({8, 100e9, 1e-6, 7, "link"});
    const double S = 1e9;
    auto c = collective_cost(Collective::all_reduce, S, net);
    CHECK(std::string(c.algorithm) == "ring");
    CHECK(c.time_s == approx(2 * 7.0 / 8 * S / 100e9 + 2 * 7 * 1e-6));
    CHECK(collective_cost(Collective::all_gather, S, net).time_s == approx(7.0 / 8 * S / 100e9 + 7e-6));
}

TEST_CASE("a small all-reduce over many ranks takes the tree (latency bound)") {
    GroupNetwork net;
    net.levels.push_back({1024, 25e9, 5e-6, 1023, "nic"});
    auto c = collective_cost(Collective::all_reduce, 1024, net);
    CHECK(std::string(c.algorithm) == "tree");
    CHECK(c.time_s < 2 * 1023 * 5e-6);
}

TEST_CASE("hierarchical collectives move 1/inner of the data over the outer level") {
    GroupNetwork net;
    net.levels.push_back({8, 200e9, 0, 7, "nvlink"});
    net.levels.push_back({4, 25e9, 0, 3, "nic"});
    const double S = 8e9;
    const double expect = 7.0 / 8 * S / 200e9 + 3.0 / 4 * (S / 8) / 25e9;
    CHECK(collective_cost(Collective::reduce_scatter, S, net).time_s == approx(expect));
}
