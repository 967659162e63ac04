// Parts of podsim that map large libraries (the CUDA runtime and cuBLAS; SimGrid with the ns-3 libraries Debian
// links it against) are modules of their own, loaded on first use (issue #16: start-up in a few MiB). This finds
// and opens one.
#pragma once
#include <string>

namespace podsim {

// The module's path: $ENV_VAR when set, else FILE beside the running executable, else FILE in the build folder
// podsim was built in (tests, bench and fuzzers run from subfolders of it).
std::string plugin_module_path(const std::string& file, const char* env_var);
// dlopen(path) and dlsym(symbol); nullptr with the reason in *why when the file is absent or either step fails.
void* load_plugin_symbol(const std::string& path, const char* symbol, std::string* why);

}  // namespace podsim
