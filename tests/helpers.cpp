#include "tests/helpers.hpp"

#include "hardware/input_error.hpp"
#include "models/software_stack.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace podsim::test {

ModelSpec llama3_8b() {
    ModelSpec m;
    m.name = "llama-8b-like";
    m.layers = 32, m.hidden = 4096, m.ffn_hidden = 14336, m.heads = 32, m.kv_heads = 8, m.head_dim = 128;
    m.vocab = 128256, m.seq_len = 8192;
    m.activation = Activation::swiglu, m.norm = Norm::rmsnorm, m.position = Position::rope;
    m.dropout = false, m.bias = false;
    return m;
}

const Catalog& catalog() {
    static const Catalog c = Catalog::load(default_catalog_dir());
    return c;
}

std::string scenario(const std::string& name) { return std::string(PODSIM_SCENARIO_DIR) + "/" + name; }
std::string shared(const std::string& rel) { return std::string(PODSIM_SHARED_DIR) + "/" + rel; }

std::vector<std::string> shipped_scenarios() {
    std::vector<std::string> v;
    for (const auto& e : std::filesystem::directory_iterator(PODSIM_SCENARIO_DIR))
        if (e.is_regular_file() && e.path().extension() == ".json") v.push_back(e.path().string());
    std::sort(v.begin(), v.end());
    return v;
}

std::string temp_dir() {
    static std::string dir = [] {
        std::string tmpl = (std::filesystem::temp_directory_path() / "podsim-test-XXXXXX").string();
        return std::string(mkdtemp(tmpl.data()));
    }();
    return dir;
}

void write_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

CommandResult run_podsim(const std::string& args) {
    const std::string out = temp_dir() + "/stdout.txt", err = temp_dir() + "/stderr.txt";
    const std::string cmd = std::string(PODSIM_BINARY) + " " + args + " >" + out + " 2>" + err + " </dev/null";
    const int status = std::system(cmd.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

int validate_json_outputs(const std::vector<std::string>& files) {
    const std::filesystem::path root = std::filesystem::path(PODSIM_SCENARIO_DIR).lexically_normal().parent_path();
    const std::string python = std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
    std::string cmd = python + " " + (root / "tests" / "validate_json.py").string() + " " +
                      (root / "docs" / "output.schema.json").string();
    for (const auto& f : files) cmd += " '" + f + "'";
    return std::system(cmd.c_str());
}

std::string stack_catalog_error(const std::string& tag, const std::function<void(Json&)>& edit) {
    namespace fs = std::filesystem;
    const std::string dir = temp_dir() + "/catalog-" + tag;
    fs::remove_all(dir);
    fs::create_directories(dir + "/software");
    Json s = Json::parse(std::ifstream(std::string(PODSIM_SOURCE_DIR) + "/hardware/catalog/software/nemo.json"));
    edit(s);
    write_file(dir + "/software/nemo.json", s.dump());
    try {
        load_software_stacks(dir);
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

Json published_record(const std::string& file, const std::string& id) {
    for (const auto& r : load_json_file(file))
        if (r.at("id") == id) return r;
    throw std::runtime_error(file + " has no record \"" + id + "\"");
}

PublishedRun load_record(const Json& record, const std::string& tag) {
    const std::string file = temp_dir() + "/" + tag + "_runs.json";
    write_file(file, Json::array({record}).dump());
    auto runs = load_published_runs(file, catalog());
    if (runs.size() != 1) throw std::runtime_error(file + ": expected one record back");
    return runs[0];
}

const SoftwareStack& shipped_stack(const std::string& framework) {
    static const std::vector<SoftwareStack> stacks = load_software_stacks(default_catalog_dir());
    const SoftwareStack* s = find_stack(stacks, framework);
    if (!s) throw std::runtime_error("no shipped software stack is named by \"" + framework + "\"");
    return *s;
}

}  // namespace podsim::test
