#include "models/calibration/loopback_dp.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <thread>

extern "C" void openblas_set_num_threads(int);
extern "C" int openblas_get_num_threads();

namespace podsim::calib {

namespace {

using Clock = std::chrono::steady_clock;

void send_all(int fd, const void* p, size_t n) {
    const char* c = static_cast<const char*>(p);
    while (n > 0) {
        const ssize_t w = ::send(fd, c, n, 0);
        if (w <= 0) throw std::runtime_error("loopback send failed");
        c += w, n -= static_cast<size_t>(w);
    }
}

void recv_all(int fd, void* p, size_t n) {
    char* c = static_cast<char*>(p);
    while (n > 0) {
        const ssize_t r = ::recv(fd, c, n, 0);
        if (r <= 0) throw std::runtime_error("loopback recv failed");
        c += r, n -= static_cast<size_t>(r);
    }
}

// Sends `out` while receiving `in` (both directions at once, as a ring step does).
void exchange(int fd, const void* out, void* in, size_t n) {
    std::thread sender([&] { send_all(fd, out, n); });
    recv_all(fd, in, n);
    sender.join();
}

// A connected pair of TCP sockets on 127.0.0.1: the parent gets one, a forked child the other.
struct Pair {
    int fd = -1;
    pid_t child = 0;
    bool is_child() const { return child == 0; }
};

Pair connect_pair() {
    const int lfd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t len = sizeof a;
    if (lfd < 0 || ::bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(lfd, 1) != 0 ||
        ::getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
        throw std::runtime_error("loopback: cannot listen on 127.0.0.1");
    std::fflush(stdout);
    std::fflush(stderr);
    Pair p;
    p.child = ::fork();
    if (p.child < 0) throw std::runtime_error("loopback: fork failed");
    if (p.child == 0) {
        ::close(lfd);
        p.fd = ::socket(AF_INET, SOCK_STREAM, 0);
        if (::connect(p.fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) _exit(3);
    } else {
        p.fd = ::accept(lfd, nullptr, nullptr);
        ::close(lfd);
        if (p.fd < 0) throw std::runtime_error("loopback: accept failed");
    }
    int one = 1;
    ::setsockopt(p.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return p;
}

void finish(Pair& p) {
    ::close(p.fd);
    if (p.is_child()) _exit(0);
    int status = 0;
    ::waitpid(p.child, &status, 0);
}

// Ring all-reduce of two ranks on a float tensor: reduce-scatter (each keeps and sums one half), all-gather.
void allreduce2(int fd, int rank, std::vector<float>& v, std::vector<float>& scratch) {
    const size_t n = v.size(), half = n / 2;
    const size_t mine = rank == 0 ? 0 : half, mine_n = rank == 0 ? half : n - half;
    const size_t theirs = rank == 0 ? half : 0, theirs_n = n - mine_n;
    scratch.resize(std::max(mine_n, theirs_n));
    // Step 1: send their half, receive their contribution to mine (sizes differ by at most one element).
    std::thread sender([&] { send_all(fd, v.data() + theirs, theirs_n * sizeof(float)); });
    recv_all(fd, scratch.data(), mine_n * sizeof(float));
    sender.join();
    for (size_t i = 0; i < mine_n; ++i) v[mine + i] += scratch[i];
    // Step 2: send my reduced half, receive theirs.
    std::thread sender2([&] { send_all(fd, v.data() + mine, mine_n * sizeof(float)); });
    recv_all(fd, v.data() + theirs, theirs_n * sizeof(float));
    sender2.join();
}

}  // namespace

LoopbackLink measure_loopback(double bytes) {
    Pair p = connect_pair();
    const size_t n = static_cast<size_t>(bytes);
    std::vector<char> out(n, 1), in(n);
    LoopbackLink link;
    double best = 1e300;
    for (int i = 0; i < 5; ++i) {
        const auto t0 = Clock::now();
        exchange(p.fd, out.data(), in.data(), n);
        best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
    }
    link.bytes_per_s = bytes / best;
    char b = 0;
    const int pings = 200;
    const auto t0 = Clock::now();
    for (int i = 0; i < pings; ++i) {
        if (p.is_child()) recv_all(p.fd, &b, 1), send_all(p.fd, &b, 1);
        else send_all(p.fd, &b, 1), recv_all(p.fd, &b, 1);
    }
    link.latency_s = std::chrono::duration<double>(Clock::now() - t0).count() / (2.0 * pings);
    finish(p);
    return link;
}

DpStepTiming measure_dp_step(const TinyGpt& shape, int steps) {
    Pair p = connect_pair();
    const int rank = p.is_child() ? 1 : 0;
    const int threads = openblas_get_num_threads();
    openblas_set_num_threads(1);  // one core per rank
    DpStepTiming best;
    best.step_s = 1e300;
    {
        CpuTrainStep t(shape);
        std::vector<float> scratch;
        for (int s = 0; s <= steps; ++s) {  // the first step warms up
            char go = 0;  // start each step together
            exchange(p.fd, &go, &go, 1);
            const auto t0 = Clock::now();
            t.accumulate();
            const auto t1 = Clock::now();
            for (auto* g : t.gradients()) allreduce2(p.fd, rank, *g, scratch);
            const auto t2 = Clock::now();
            t.apply();
            double mine[2] = {std::chrono::duration<double>(Clock::now() - t0).count(),
                              std::chrono::duration<double>(t2 - t1).count()};
            double theirs[2];
            exchange(p.fd, mine, theirs, sizeof mine);
            const double step_s = std::max(mine[0], theirs[0]);
            if (s > 0 && step_s < best.step_s) best.step_s = step_s, best.allreduce_s = std::max(mine[1], theirs[1]);
        }
        for (auto* g : t.gradients()) best.gradient_bytes.push_back(g->size() * sizeof(float));
    }
    openblas_set_num_threads(threads);
    finish(p);
    return best;
}

}  // namespace podsim::calib
