// Work spread over threads, with results that do not depend on how many: callers give each item its own slot and
// combine the slots in item order afterwards.
#pragma once
#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace podsim {

// The machine's cores (at least 1): the default of --jobs.
inline int machine_cores() { return std::max(1u, std::thread::hardware_concurrency()); }

// fn(i, worker) for every i in [0, n), on min(jobs, n) threads (worker in [0, jobs)); items are taken in order as
// threads free up. The first exception by item index is rethrown after all threads end. jobs <= 1 runs inline.
inline void parallel_for(size_t n, int jobs, const std::function<void(size_t, int)>& fn) {
    if (jobs <= 1 || n <= 1) {
        for (size_t i = 0; i < n; ++i) fn(i, 0);
        return;
    }
    const int threads = static_cast<int>(std::min<size_t>(static_cast<size_t>(jobs), n));
    std::atomic<size_t> next{0};
    std::mutex m;
    size_t failed_at = n;
    std::exception_ptr failure;
    auto work = [&](int worker) {
        for (size_t i; (i = next.fetch_add(1)) < n;) {
            try {
                fn(i, worker);
            } catch (...) {
                std::lock_guard<std::mutex> lock(m);
                if (i < failed_at) failed_at = i, failure = std::current_exception();
            }
        }
    };
    std::vector<std::thread> pool;
    for (int w = 1; w < threads; ++w) pool.emplace_back(work, w);
    work(0);
    for (auto& t : pool) t.join();
    if (failure) std::rethrow_exception(failure);
}

}  // namespace podsim
