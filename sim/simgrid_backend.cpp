// The SimGrid backend: each simulation in a forked child (SimGrid keeps one engine per process), run by the module
// libpodsim_simgrid.so (simgrid_run.cpp, loaded on first use). See flows.hpp for what it promises.
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

#include "hardware/plugin_module.hpp"
#include "sim/flows.hpp"
#include "sim/simgrid_module.hpp"

namespace podsim {

namespace {

using simgrid_module::PairRoute;
using simgrid_module::Routes;

// The module, loaded in the parent (before any fork) the first time a simulation needs it; null with the reason.
const simgrid_module::Api* try_simgrid_api(std::string* reason) {
    static std::string why;
    static const simgrid_module::Api* api = [] {
        auto entry = reinterpret_cast<simgrid_module::ApiEntry>(load_plugin_symbol(
            plugin_module_path("libpodsim_simgrid.so", "PODSIM_SIMGRID_MODULE"), simgrid_module::kApiSymbol, &why));
        const simgrid_module::Api* a = entry ? entry() : nullptr;
        if (a && a->version != simgrid_module::kApiVersion) a = nullptr, why = "the SimGrid module is not this podsim's";
        return a;
    }();
    if (!api && reason) *reason = why + " (rebuild podsim: cmake --build build)";
    return api;
}

const simgrid_module::Api& simgrid_api() {
    std::string why;
    const simgrid_module::Api* api = try_simgrid_api(&why);
    if (!api) throw std::runtime_error("simgrid backend: " + why);
    return *api;
}

}  // namespace

bool simgrid_backend_available(std::string* why) { return try_simgrid_api(why) != nullptr; }

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
    const simgrid_module::Api& api = simgrid_api();
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
            ends = api.run(concurrent, g, routes);
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
