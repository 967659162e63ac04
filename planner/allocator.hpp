// How podsim's programs ask glibc to keep freed memory (cli/main.cpp and bench/bench.cpp call this first).
#pragma once
#include <malloc.h>

namespace podsim {

// The engine builds and drops a task graph of up to ~10^5 tasks for every plan it confirms (megabytes of vectors).
// By default glibc gives blocks of that size back to the kernel when they are freed (the mmap threshold, heap
// trimming), so every plan paid page faults and the zeroing of fresh pages: 40% of a search's time, and the two
// workers of --jobs 2 queued in the kernel for it. Kept in the process instead (blocks up to 32 MiB from the heap,
// the heap not trimmed), the 1T search ran 1.5x faster on one thread and scaled better on two (bench,
// search-threads). The resident set stays at the largest plan's need rather than falling back between plans.
inline void keep_freed_memory() {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest allowed value on 64-bit
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

}  // namespace podsim
