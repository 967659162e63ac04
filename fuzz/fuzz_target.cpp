// The libFuzzer entry of one target, chosen at compile time (PODSIM_FUZZ_TARGET = scenario, published_run, sweep
// or claim). InputError and infeasible plans are normal endings; any other exception is reported and aborts, so
// that libFuzzer saves the input as a crash (as it does for sanitizer reports, signals, timeouts and OOMs).
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>
#include <typeinfo>

#include "fuzz/fuzz_entry.hpp"

#ifndef PODSIM_FUZZ_TARGET
#error "PODSIM_FUZZ_TARGET must be defined"
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using podsim::fuzz::Target;
    // PODSIM_FUZZ_VERBOSE=1: one line per input with how it ended (to see what a corpus reaches).
    static const bool verbose = std::getenv("PODSIM_FUZZ_VERBOSE") != nullptr;
    try {
        const auto o = podsim::fuzz::run_input(Target::PODSIM_FUZZ_TARGET,
                                               std::string_view(reinterpret_cast<const char*>(data), size));
        if (verbose) std::fprintf(stderr, "podsim fuzz outcome: %s\n", podsim::fuzz::to_string(o));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "podsim fuzz finding: %s escaped: %s\n", typeid(e).name(), e.what());
        std::abort();
    } catch (...) {
        std::fprintf(stderr, "podsim fuzz finding: a non-std exception escaped\n");
        std::abort();
    }
    return 0;
}
