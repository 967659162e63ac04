// Start-up (issue #16): podsim maps neither CUDA/cuBLAS nor SimGrid (and the ns-3 libraries Debian links it to)
// until a command needs them; each lives in a module loaded on first use, and a missing module is a clear error.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "tests/helpers.hpp"

using namespace podsim::test;

namespace {

std::string command_output(const std::string& cmd) {
    std::string out;
    std::unique_ptr<FILE, int (*)(FILE*)> p(popen(cmd.c_str(), "r"), pclose);
    if (!p) return out;
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, p.get())) > 0;) out.append(buf, n);
    return out;
}

// Sets an environment variable for the scope (children of run_podsim inherit it).
struct ScopedEnv {
    std::string name;
    ScopedEnv(const char* n, const char* v) : name(n) { setenv(n, v, 1); }
    ~ScopedEnv() { unsetenv(name.c_str()); }
};

}  // namespace

TEST_CASE("podsim's executable needs neither CUDA nor SimGrid to start") {
    // The dynamic loader's view: the libraries podsim is linked against, recursively.
    const std::string libs = command_output("ldd " + std::string(PODSIM_BINARY) + " 2>&1");
    REQUIRE(libs.find("libc.so") != std::string::npos);
    for (const char* lib : {"libcudart", "libcublas", "libsimgrid", "libns3"}) {
        CAPTURE(lib);
        CHECK(libs.find(lib) == std::string::npos);
    }
}

TEST_CASE("a missing SimGrid or CUDA module is a usage error that names it, not a crash") {
    {
        ScopedEnv e("PODSIM_SIMGRID_MODULE", "/nonexistent/libpodsim_simgrid.so");
        auto r = run_podsim("run " + scenario("gpt3-175b-128xa3-mega.json") + " --network simgrid");
        CHECK(r.exit_code == 2);
        CHECK(r.err.find("--network simgrid: /nonexistent/libpodsim_simgrid.so is absent") != std::string::npos);
        CHECK(r.out.empty());
    }
    {
        ScopedEnv e("PODSIM_CUDA_MODULE", "/nonexistent/libpodsim_cuda.so");
        auto r = run_podsim("calibrate " + scenario("seed-1.2t-v4-2048.json") + " --out " + temp_dir() +
                            "/never.json --device cuda");
        CHECK(r.exit_code == 2);
        CHECK(r.err.find("/nonexistent/libpodsim_cuda.so is absent") != std::string::npos);
    }
    // The analytical backend does not look for the module at all.
    ScopedEnv e("PODSIM_SIMGRID_MODULE", "/nonexistent/libpodsim_simgrid.so");
    CHECK(run_podsim("run " + scenario("gpt3-175b-128xa3-mega.json")).exit_code == 0);
}
