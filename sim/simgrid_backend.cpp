// The SimGrid backend: the only file that includes SimGrid. See flows.hpp for what it promises.
#include <simgrid/s4u.hpp>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "sim/flows.hpp"

namespace sg4 = simgrid::s4u;

namespace podsim {

namespace {

// Every sender/receiver pair's route, looked up in the parent before the fork (in the order the flows first name
// them): the child reads this table and the graph's links only, never the graph's route cache, which another
// thread of the parent may be filling at the moment of the fork.
struct PairRoute {
    uint32_t src, dst;
    const std::vector<uint32_t>* links;
};
using Routes = std::vector<PairRoute>;

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

double simgrid_time_s(const std::vector<LoweredCollective>& concurrent, const NetworkGraph& g) {
    const auto ends = simgrid_end_times_s(concurrent, g);
    return ends.empty() ? 0 : *std::max_element(ends.begin(), ends.end());
}

namespace {

bool write_all(int fd, const void* data, size_t n) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
        const ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        p += w, n -= static_cast<size_t>(w);
    }
    return true;
}

bool read_all(int fd, void* data, size_t n) {
    char* p = static_cast<char*>(data);
    while (n > 0) {
        const ssize_t got = read(fd, p, n);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return false;
        p += got, n -= static_cast<size_t>(got);
    }
    return true;
}

std::string errno_text(const char* what) {
    return std::string("simgrid backend: ") + what + ": " + std::strerror(errno);
}

// All that was written to a memory file (the child's stderr).
std::string read_back(int fd) {
    std::string text;
    if (fd < 0 || lseek(fd, 0, SEEK_SET) != 0) return text;
    char buf[4096];
    for (ssize_t got; (got = read(fd, buf, sizeof buf)) != 0;) {
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) break;
        text.append(buf, static_cast<size_t>(got));
    }
    return text;
}

// Why a child that sent no result ended: its wait status, and the end of what it wrote to stderr (SimGrid logs a
// failed internal check there, then aborts).
std::string child_end(int status, const std::string& stderr_text) {
    std::string why = "the SimGrid process ended without a result";
    if (WIFSIGNALED(status)) {
        const char* name = sigdescr_np(WTERMSIG(status));
        why = "the SimGrid process was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
              (name ? name : "?") + ")";
    } else if (WIFEXITED(status)) {
        why = "the SimGrid process exited with status " + std::to_string(WEXITSTATUS(status)) + " without a result";
    }
    std::string tail = stderr_text.substr(stderr_text.size() > 1000 ? stderr_text.size() - 1000 : 0);
    while (!tail.empty() && std::isspace(static_cast<unsigned char>(tail.back()))) tail.pop_back();
    return tail.empty() ? why : why + "; it said: " + tail;
}

}  // namespace

std::vector<double> simgrid_end_times_s(const std::vector<LoweredCollective>& concurrent, const NetworkGraph& g) {
    // Route every pair before forking: the child reads the table, and the parent keeps the routes for later runs.
    Routes routes;
    std::unordered_set<uint64_t> routed;
    for (const auto& lc : concurrent)
        for (const auto& lane : lc.lanes)
            for (const auto& ph : lane.phases)
                for (const auto& f : ph.flows)
                    if (f.src != f.dst && routed.insert((uint64_t(f.src) << 32) | f.dst).second)
                        routes.push_back({f.src, f.dst, &g.route(f.src, f.dst)});
    std::fflush(stdout);  // the child must not repeat what the parent has buffered
    std::fflush(stderr);
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error(errno_text("pipe failed"));
    // The child's stderr, kept: the reason when it dies, passed on when it succeeds (-1: not kept, left as is).
    const int err_fd = memfd_create("podsim-simgrid-stderr", MFD_CLOEXEC);
    const pid_t pid = fork();
    if (pid < 0) {
        const std::string why = errno_text("fork failed");
        close(fds[0]), close(fds[1]);
        if (err_fd >= 0) close(err_fd);
        throw std::runtime_error(why);
    }
    if (pid == 0) {
        // The child answers with a status word, then the end times (0) or the length and text of the error (1).
        close(fds[0]);
        if (err_fd >= 0) dup2(err_fd, STDERR_FILENO);
        // A crash here is the child's to report through its wait status, not a crash handler of the parent's
        // (a test framework's, say) running in the child.
        for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, SIG_DFL);
        int32_t status = 0;
        std::vector<double> ends;
        std::string error;
        try {
            ends = run_in_this_process(concurrent, g, routes);
        } catch (const std::exception& e) {
            status = 1, error = e.what();
        } catch (...) {
            status = 1, error = "an exception that is not a std::exception";
        }
        bool ok = write_all(fds[1], &status, sizeof status);
        if (status == 0) {
            ok = ok && write_all(fds[1], ends.data(), ends.size() * sizeof(double));
        } else {
            const auto len = static_cast<uint32_t>(error.size());
            ok = ok && write_all(fds[1], &len, sizeof len) && write_all(fds[1], error.data(), len);
        }
        close(fds[1]);
        _exit(ok ? 0 : 1);
    }
    close(fds[1]);
    int32_t status = -1;
    std::vector<double> ends(concurrent.size(), 0.0);
    std::string error;
    bool complete = read_all(fds[0], &status, sizeof status);
    if (complete && status == 0) {
        complete = read_all(fds[0], ends.data(), ends.size() * sizeof(double));
    } else if (complete) {
        uint32_t len = 0;
        complete = read_all(fds[0], &len, sizeof len) && len <= (1u << 20);
        if (complete) error.resize(len), complete = read_all(fds[0], error.data(), len);
    }
    close(fds[0]);
    int wait_status = 0;
    while (waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
    }
    const std::string child_stderr = read_back(err_fd);
    if (err_fd >= 0) close(err_fd);
    if (!complete)
        throw std::runtime_error("simgrid backend: the simulation failed: " + child_end(wait_status, child_stderr));
    if (status != 0) throw std::runtime_error("simgrid backend: the simulation failed: " + error);
    if (!child_stderr.empty()) std::fwrite(child_stderr.data(), 1, child_stderr.size(), stderr);
    return ends;
}

}  // namespace podsim
