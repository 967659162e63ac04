// The SimGrid run (the module libpodsim_simgrid.so; see simgrid_module.hpp): the only file that includes SimGrid.
#include <simgrid/s4u.hpp>

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

    auto* zone = sg4::create_full_zone("podsim");
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
        zone->add_route(host(r.src)->get_netpoint(), host(r.dst)->get_netpoint(), nullptr, nullptr, route, false);
    }
    std::vector<double> ends(concurrent.size(), 0.0);
    if (hosts.empty()) return ends;
    sg4::Host* any = hosts.begin()->second;
    zone->seal();

    for (size_t i = 0; i < concurrent.size(); ++i)
        for (const auto& lane : concurrent[i].lanes)
            sg4::Actor::create("lane", any, [&lane, &hosts, &end = ends[i]]() {
                for (const auto& ph : lane.phases) {
                    std::vector<sg4::CommPtr> comms;
                    for (const auto& f : ph.flows) {
                        if (f.src == f.dst) continue;
                        const auto bytes = static_cast<uint64_t>(std::max(1.0, std::ceil(f.bytes)));
                        comms.push_back(sg4::Comm::sendto_async(hosts.at(f.src), hosts.at(f.dst), bytes));
                    }
                    sg4::Comm::wait_all(comms);
                }
                end = std::max(end, sg4::Engine::get_clock());
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
