// podsim's side of the GPU calibration kernels: loads libpodsim_cuda.so on the first call and forwards to it, so
// that only `calibrate --device cuda` maps the CUDA runtime and cuBLAS (issue #16: every command used to pay ~250 MiB
// and 0.1 s for them at start-up).
#include <mutex>
#include <stdexcept>

#include "hardware/calibration/gpu_kernels.hpp"
#include "hardware/plugin_module.hpp"

namespace podsim::calib::gpu {

namespace {

struct Loaded {
    const Api* api = nullptr;
    std::string why;  // when api is null
};

const Loaded& loaded() {
    static Loaded l;
    static std::once_flag once;
    std::call_once(once, [] {
        const std::string path = module_path();
        std::string why;
        auto entry = reinterpret_cast<ApiEntry>(load_plugin_symbol(path, kApiSymbol, &why));
        if (!entry) {
            l.why = "this build of podsim has no usable CUDA runner (" + why +
                    "; it is built where nvcc and the CUDA toolkit are found when podsim is configured)";
            return;
        }
        const Api* api = entry();
        if (!api || api->version != kApiVersion) {
            l.why = "the CUDA runner " + path + " is not this podsim's (rebuild podsim)";
            return;
        }
        l.api = api;  // the module stays loaded for the life of the process
    });
    return l;
}

const Api& need() {
    const Loaded& l = loaded();
    if (!l.api) throw std::runtime_error(l.why);
    return *l.api;
}

}  // namespace

std::string module_path() { return plugin_module_path("libpodsim_cuda.so", "PODSIM_CUDA_MODULE"); }

bool available(std::string* why) {
    const Loaded& l = loaded();
    if (!l.api) {
        if (why) *why = l.why;
        return false;
    }
    return l.api->available(why);
}
std::string device_name() { return need().device_name(); }
std::string library_versions() { return need().library_versions(); }
Timing gemm(long m, long n, long k, double budget_s) { return need().gemm(m, n, k, budget_s); }
Timing attention(long bh, long s, long d, double budget_s) { return need().attention(bh, s, d, budget_s); }
Timing layernorm(long t, long h, double budget_s) { return need().layernorm(t, h, budget_s); }
Timing gelu(long n, double budget_s) { return need().gelu(n, budget_s); }
Timing stream_add(long n, double budget_s) { return need().stream_add(n, budget_s); }
Timing adamw(long n, double budget_s) { return need().adamw(n, budget_s); }

}  // namespace podsim::calib::gpu
