// Every input the fuzzers of fuzz/ found crashing podsim, kept in tests/fuzz_regressions/<target>/, replayed through
// the fuzzers' own entry (fuzz/fuzz_entry.hpp): each must end as an InputError or an infeasible (or simulated,
// in-range) result. Each input runs in a child process so that a crash, a sanitizer report, a hang or a runaway
// allocation fails this test with the file's name instead of taking the whole test binary down.
#include <doctest/doctest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

#include "fuzz/fuzz_entry.hpp"
#include "hardware/input_error.hpp"
#include "tests/helpers.hpp"

namespace fs = std::filesystem;
using podsim::fuzz::Outcome;
using podsim::fuzz::Target;

namespace {

using podsim::test::kAsan;

constexpr unsigned kSecondsPerInput = 60;
constexpr rlim_t kMemoryPerInput = 3ULL << 30;  // address space, without ASan (whose shadow maps terabytes)

std::string read_all(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// Runs one input in a child process; returns "" when it ended well, else what happened.
std::string replay(Target t, const std::string& bytes) {
    int pipefd[2];
    if (pipe(pipefd) != 0) return "pipe failed";
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) return "fork failed";
    if (pid == 0) {
        close(pipefd[0]);
        alarm(kSecondsPerInput);
        if (!kAsan) {
            rlimit lim{kMemoryPerInput, kMemoryPerInput};
            setrlimit(RLIMIT_AS, &lim);
        }
        std::string msg;
        int code = 0;
        try {
            const Outcome o = podsim::fuzz::run_input(t, bytes);
            msg = podsim::fuzz::to_string(o);
        } catch (const std::exception& e) {
            msg = std::string(typeid(e).name()) + " escaped: " + e.what();
            code = 3;
        } catch (...) {
            msg = "a non-std exception escaped";
            code = 3;
        }
        if (write(pipefd[1], msg.data(), msg.size()) < 0) code = 5;
        close(pipefd[1]);
        _exit(code);
    }
    close(pipefd[1]);
    std::string msg;
    char buf[4096];
    for (ssize_t n; (n = read(pipefd[0], buf, sizeof buf)) > 0;) msg.append(buf, static_cast<size_t>(n));
    close(pipefd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        return std::string("killed by signal ") + std::to_string(sig) + " (" + strsignal(sig) + ")" +
               (sig == SIGALRM ? ", over " + std::to_string(kSecondsPerInput) + " s" : "");
    }
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (code == 0) return "";
    if (code == 3) return msg;
    return "exit " + std::to_string(code) + (msg.empty() ? " (a sanitizer report or an abort: see stderr)" : ": " + msg);
}

}  // namespace

TEST_CASE("every kept fuzz crasher ends as an input error or an infeasible plan, never a crash") {
    const fs::path root = PODSIM_FUZZ_REGRESSION_DIR;
    size_t replayed = 0;
    for (Target t : {Target::scenario, Target::published_run, Target::sweep, Target::claim}) {
        const fs::path dir = root / podsim::fuzz::to_string(t);
        if (!fs::is_directory(dir)) continue;
        std::vector<fs::path> files;
        for (const auto& e : fs::directory_iterator(dir))
            if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
        std::sort(files.begin(), files.end());
        for (const auto& f : files) {
            CAPTURE(f.string());
            const std::string bytes = read_all(f);
            const std::string what = replay(t, bytes);
            CHECK_MESSAGE(what.empty(), f.filename().string() << " (" << podsim::fuzz::to_string(t) << "): " << what);
            // The inputs issue #10 lists are all bad input or impossible plans: each must be refused with a reason
            // (exit 1 or 3), not simulated. (Safe in-process once the forked replay above ended cleanly.)
            if (what.empty() && f.filename().string().rfind("issue10-", 0) == 0)
                CHECK_MESSAGE(podsim::fuzz::run_input(t, bytes) != Outcome::simulated,
                              f.filename().string() << " was simulated; expected an input error or an infeasible plan");
            ++replayed;
        }
    }
    MESSAGE("replayed " << replayed << " kept fuzz inputs");
}

TEST_CASE("the fuzz entry reads the shipped inputs of every target without an input error") {
    // The seeds the fuzzers start from (fuzz/seed_corpus.sh) must get past the readers, or the fuzzers explore
    // nothing but error paths.
    const fs::path scen = PODSIM_SCENARIO_DIR;
    CHECK(podsim::fuzz::run_input(Target::scenario, read_all(scen / "seed-1.2t-v4-2048.json")) != Outcome::input_error);
    CHECK(podsim::fuzz::run_input(Target::sweep, read_all(scen / "sweeps" / "gpt3-175b-what-if.json")) !=
          Outcome::input_error);
    CHECK(podsim::fuzz::run_input(Target::claim, read_all(scen / "claims" / "seed-1.2t-21-days.json")) !=
          Outcome::input_error);
    CHECK(podsim::fuzz::run_input(Target::published_run, read_all(scen / "validation" / "moe_runs.json")) !=
          Outcome::input_error);
    CHECK(podsim::fuzz::run_input(Target::scenario, "{\"model\": 1") == Outcome::input_error);
}
