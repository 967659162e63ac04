#include "hardware/plugin_module.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>

namespace podsim {

std::string plugin_module_path(const std::string& file, const char* env_var) {
    namespace fs = std::filesystem;
    if (const char* p = std::getenv(env_var); p && *p) return p;
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec && fs::exists(exe.parent_path() / file)) return (exe.parent_path() / file).string();
    return (fs::path(PODSIM_MODULE_DIR) / file).string();
}

void* load_plugin_symbol(const std::string& path, const char* symbol, std::string* why) {
    if (!std::filesystem::exists(path)) {
        if (why) *why = path + " is absent";
        return nullptr;
    }
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);  // kept open for the life of the process
    if (!h) {
        const char* e = dlerror();
        if (why) *why = "cannot load " + path + ": " + (e ? e : "dlopen failed");
        return nullptr;
    }
    void* sym = dlsym(h, symbol);
    if (!sym && why) *why = path + " has no " + symbol + " (a module of another podsim build?)";
    return sym;
}

}  // namespace podsim
