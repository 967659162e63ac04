// The SimGrid backend: the only file that includes SimGrid. See flows.hpp for what it promises.
#include <simgrid/s4u.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <unordered_map>

#include "sim/flows.hpp"

namespace sg4 = simgrid::s4u;

namespace podsim {

namespace {

std::vector<double> run_in_this_process(const std::vector<LoweredCollective>& concurrent, const NetworkGraph& g) {
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
    std::unordered_map<uint64_t, bool> routed;
    for (const auto& lc : concurrent)
        for (const auto& lane : lc.lanes)
            for (const auto& ph : lane.phases)
                for (const auto& f : ph.flows) {
                    if (f.src == f.dst) continue;
                    const uint64_t key = (uint64_t(f.src) << 32) | f.dst;
                    if (routed.count(key)) continue;
                    routed[key] = true;
                    std::vector<sg4::LinkInRoute> route;
                    for (uint32_t id : g.route(f.src, f.dst)) route.emplace_back(link(id));
                    zone->add_route(host(f.src)->get_netpoint(), host(f.dst)->get_netpoint(), nullptr, nullptr, route,
                                    false);
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

double simgrid_time_s(const std::vector<LoweredCollective>& concurrent, const NetworkGraph& g) {
    const auto ends = simgrid_end_times_s(concurrent, g);
    return ends.empty() ? 0 : *std::max_element(ends.begin(), ends.end());
}

std::vector<double> simgrid_end_times_s(const std::vector<LoweredCollective>& concurrent, const NetworkGraph& g) {
    // Make every route before forking, so the child does not repeat the work the parent may reuse.
    for (const auto& lc : concurrent)
        for (const auto& lane : lc.lanes)
            for (const auto& ph : lane.phases)
                for (const auto& f : ph.flows)
                    if (f.src != f.dst) g.route(f.src, f.dst);
    std::fflush(stdout);  // the child must not repeat what the parent has buffered
    std::fflush(stderr);
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error("simgrid backend: pipe failed");
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("simgrid backend: fork failed");
    if (pid == 0) {
        close(fds[0]);
        std::vector<double> ends;
        try {
            ends = run_in_this_process(concurrent, g);
        } catch (...) {
            ends.assign(concurrent.size(), -1.0);
        }
        const char* p = reinterpret_cast<const char*>(ends.data());
        size_t left = ends.size() * sizeof(double);
        while (left > 0) {
            const ssize_t w = write(fds[1], p, left);
            if (w <= 0) break;
            p += w, left -= static_cast<size_t>(w);
        }
        close(fds[1]);
        _exit(0);
    }
    close(fds[1]);
    std::vector<double> ends(concurrent.size(), -1.0);
    char* p = reinterpret_cast<char*>(ends.data());
    size_t left = ends.size() * sizeof(double);
    while (left > 0) {
        const ssize_t got = read(fds[0], p, left);
        if (got <= 0) break;
        p += got, left -= static_cast<size_t>(got);
    }
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    for (double t : ends)
        if (t < 0) throw std::runtime_error("simgrid backend: the simulation failed");
    return ends;
}

}  // namespace podsim
