// The SimGrid run (the module libpodsim_simgrid.so; see simgrid_module.hpp): the only file that includes SimGrid.
#include <simgrid/s4u.hpp>
#include <simgrid/s4u/Barrier.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/simgrid_module.hpp"

namespace sg4 = simgrid::s4u;

namespace podsim::simgrid_module {

namespace {

std::vector<double> run_in_this_process(const std::vector<LoweredCollective>& concurrent, const NetworkGraph& g,
                                        const Routes& routes) {
    int argc = 2;
    char arg0[] = "podsim-simgrid";
    char arg1[] = "--log=root.thres:critical";
    char* argv[] = {arg0, arg1, nullptr};
    sg4::Engine e(&argc, argv);
    // CM02: max-min sharing with no bandwidth/latency correction factors; no cross-traffic (acks) and no TCP
    // window cap, so a lone flow takes exactly bytes / bandwidth + latency.
    sg4::Engine::set_config("network/model:CM02");
    sg4::Engine::set_config("network/crosstraffic:0");
    sg4::Engine::set_config("network/TCP-gamma:0");
    // The solver as SimGrid ships it, said here because it was measured: lazy updates (only the constraints a
    // finished flow touched are re-solved) ran Switch-C's 65,280-flow all-to-all in 6.5 s where a full re-solve took
    // 61 s, with the same times. The precisions stay at their defaults: surf/precision is absolute (1e-5 s) and
    // coarser values moved microsecond collectives by 10x; maxmin/precision 1e-3 gave the same times, no faster.
    sg4::Engine::set_config("network/optim:Lazy");
    // One actor per chip and lane (tens of thousands at scale): small stacks, without guard pages, whose mprotect
    // would split the mapping once per actor. The actors only post comms and wait (the kernel's side of each call
    // runs on maestro's stack; 16 KiB ran every bench step, 32 leaves room), and SimGrid zeroes each stack, so 8 MiB
    // (its default) would be 8 MiB touched per actor: 64 KiB cost the 1T step on 8 x v5p-12288 0.2 GiB more.
    sg4::Engine::set_config("contexts/stack-size:32");
    sg4::Engine::set_config("contexts/guard-size:0");

    // Routes given pair by pair, as bypass routes of a zone that has no routing of its own: SimGrid's full zone
    // keeps an n x n table of them, 2 GiB zeroed for 16k chips, where a step uses a few routes per chip.
    auto* zone = sg4::create_empty_zone("podsim");
    std::unordered_map<uint32_t, sg4::Host*> hosts;
    std::unordered_map<uint32_t, sg4::Link*> links;
    auto host = [&](uint32_t chip) {
        auto it = hosts.find(chip);
        if (it != hosts.end()) return it->second;
        return hosts[chip] = zone->create_host("chip" + std::to_string(chip), 1e12);
    };
    auto link = [&](uint32_t id) {
        auto it = links.find(id);
        if (it != links.end()) return it->second;
        const auto& l = g.links[id];
        return links[id] = zone->create_link("l" + std::to_string(id), l.bytes_per_s)->set_latency(l.latency_s)->seal();
    };
    for (const auto& r : routes) {
        std::vector<sg4::LinkInRoute> route;
        for (uint32_t id : *r.links) route.emplace_back(link(id));
        zone->add_bypass_route(host(r.src)->get_netpoint(), host(r.dst)->get_netpoint(), nullptr, nullptr, route);
    }
    std::vector<double> ends(concurrent.size(), 0.0);
    if (hosts.empty()) return ends;
    zone->seal();

    // Each flow is a mailbox message between two actors that live on its two chips, one actor per chip and lane,
    // which post their phase's sends and receives and meet the lane's other chips at a barrier between phases.
    // Not SimGrid's host-to-host Comm::sendto: those are detached, and SimGrid 3.32 keeps every detached comm in
    // one list that each finishing comm is removed from by a linear search (CommImpl::finish), so a step with
    // n flows in flight cost O(n) per flow (92% of the time at 50k chips). Here each actor holds only its own
    // few comms. The timing is the same: a comm starts when both ends have posted, which is when the barrier
    // lets the phase begin.
    // A phase repeated r times (a ring's steps) is one message of r times the bytes, then r - 1 more of the
    // phase's route latency, in which its links carry nothing: r steps of latency + chunk / rate each, as the
    // barrier-separated steps take when the phase's flows move at one rate, as a ring's do. Where they do not
    // (some of its links shared with another collective), the faster flows go on with the next chunk instead of
    // waiting at a barrier, as a ring does that has no barrier, only its neighbour's data to wait for.
    std::unordered_map<uint64_t, double> latency_s;  // by (src << 32 | dst)
    for (const auto& r : routes) latency_s[(uint64_t(r.src) << 32) | r.dst] = g.path_latency_s(*r.links);
    struct Post {
        uint32_t phase;
        uint32_t peer;   // index of the peer's actor in the lane
        bool send;       // else a receive
        uint64_t bytes;  // a send's simulated size
    };
    struct ChipActor {
        uint32_t chip;
        std::vector<Post> posts;  // by phase
        sg4::Mailbox* inbox = nullptr;
    };
    struct Lane {
        std::vector<ChipActor> actors;
        std::vector<double> then_idle_s;  // by phase: (repeat - 1) x the phase's longest route latency
        sg4::BarrierPtr barrier;
        double* end = nullptr;
    };
    std::vector<Lane> lanes;
    for (size_t i = 0; i < concurrent.size(); ++i)
        for (const auto& lane : concurrent[i].lanes) {
            Lane l;
            l.end = &ends[i];
            // A chip's sends of one phase go to its actors kPostsPerActor at a time, and its receives likewise:
            // SimGrid removes each finished comm from its actor's list by a linear search, so an all-to-all's
            // n - 1 sends and n - 1 receives on one actor would cost O(n) per comm.
            constexpr uint32_t kPostsPerActor = 16;
            std::unordered_map<uint64_t, uint32_t> index;  // (chip, k-th actor of the chip) -> actor
            auto actor_of = [&](uint32_t chip, uint32_t k) {
                auto [it, fresh] = index.try_emplace((uint64_t(chip) << 32) | k, static_cast<uint32_t>(l.actors.size()));
                if (fresh) l.actors.push_back({chip, {}, nullptr});
                return it->second;
            };
            std::unordered_map<uint32_t, uint32_t> sent, received;  // this phase's posts so far, by chip
            for (size_t j = 0; j < lane.phases.size(); ++j) {
                const FlowPhase& ph = lane.phases[j];
                double lat = 0;
                if (ph.repeat == 0) {  // runs no times (analytical_time_s skips it too)
                    l.then_idle_s.push_back(0.0);
                    continue;
                }
                sent.clear(), received.clear();
                for (const auto& f : ph.flows) {
                    if (f.src == f.dst) continue;
                    const uint32_t a = actor_of(f.src, sent[f.src]++ / kPostsPerActor);
                    const uint32_t b = actor_of(f.dst, received[f.dst]++ / kPostsPerActor);
                    const auto bytes = static_cast<uint64_t>(std::max(1.0, std::ceil(f.bytes))) * ph.repeat;  // as r steps
                    l.actors[a].posts.push_back({static_cast<uint32_t>(j), b, true, bytes});
                    l.actors[b].posts.push_back({static_cast<uint32_t>(j), a, false, 0});
                    lat = std::max(lat, latency_s.at((uint64_t(f.src) << 32) | f.dst));
                }
                l.then_idle_s.push_back(ph.repeat > 1 ? (ph.repeat - 1) * lat : 0.0);
            }
            if (l.actors.empty()) continue;
            lanes.push_back(std::move(l));
        }
    size_t mailbox_id = 0;
    for (auto& l : lanes) {
        for (auto& a : l.actors) a.inbox = sg4::Mailbox::by_name("m" + std::to_string(mailbox_id++));
        if (l.then_idle_s.size() > 1) l.barrier = sg4::Barrier::create(static_cast<unsigned>(l.actors.size()));
    }
    static int payload = 0;  // messages carry no data, only their simulated size
    for (auto& l : lanes)
        for (auto& a : l.actors)
            sg4::Actor::create("chip", hosts.at(a.chip), [&l, &a] {
                void* received = nullptr;
                size_t next = 0;
                std::vector<sg4::CommPtr> comms;
                for (uint32_t j = 0; j < l.then_idle_s.size(); ++j) {
                    comms.clear();
                    for (; next < a.posts.size() && a.posts[next].phase == j; ++next) {
                        const Post& p = a.posts[next];
                        if (p.send) comms.push_back(l.actors[p.peer].inbox->put_async(&payload, p.bytes));
                        else comms.push_back(a.inbox->get_async(&received));
                    }
                    sg4::Comm::wait_all(comms);
                    if (l.then_idle_s[j] > 0) sg4::this_actor::sleep_for(l.then_idle_s[j]);
                    if (l.barrier) l.barrier->wait();
                }
                *l.end = std::max(*l.end, sg4::Engine::get_clock());
            });
    e.run();
    return ends;
}

}  // namespace

}  // namespace podsim::simgrid_module

extern "C" __attribute__((visibility("default"))) const podsim::simgrid_module::Api* podsim_simgrid_api() {
    static const podsim::simgrid_module::Api api{podsim::simgrid_module::kApiVersion,
                                                 &podsim::simgrid_module::run_in_this_process};
    return &api;
}
