// The layers are one-way: hardware <- placement <- sim <- models <- planner <- reports <- cli. A file may include its own layer
// and those below it, never one above. The build enforces this for each layer library's .cpp files (its include
// path is a view of the layers it may see: CMakeLists.txt, PODSIM_LAYERS); this test checks every line of every
// source file of every layer, headers included, since a header that only higher layers include is never compiled
// in its own layer's view. bench/, fuzz/ and tests/ may include anything; no layer may include them.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// Lowest first. bench, fuzz and tests sit above every layer.
const std::vector<std::string> kLayers = {"hardware", "placement", "sim", "models", "planner", "reports", "cli"};
const std::vector<std::string> kTop = {"bench", "fuzz", "tests"};

// The rank of a top-level folder in the order; -1 when it is no source folder (an include of a system header).
int rank_of(const std::string& dir) {
    const auto it = std::find(kLayers.begin(), kLayers.end(), dir);
    if (it != kLayers.end()) return static_cast<int>(it - kLayers.begin());
    if (std::find(kTop.begin(), kTop.end(), dir) != kTop.end()) return static_cast<int>(kLayers.size());
    return -1;
}

// The path an #include line names ("models/step.hpp"), or "" when the line is no #include.
std::string included_path(const std::string& line) {
    size_t i = line.find_first_not_of(" \t");
    if (i == std::string::npos || line[i] != '#') return "";
    i = line.find_first_not_of(" \t", i + 1);
    if (i == std::string::npos || line.compare(i, 7, "include") != 0) return "";
    i = line.find_first_not_of(" \t", i + 7);
    if (i == std::string::npos || (line[i] != '"' && line[i] != '<')) return "";
    const char close = line[i] == '"' ? '"' : '>';
    const size_t end = line.find(close, i + 1);
    return end == std::string::npos ? "" : line.substr(i + 1, end - i - 1);
}

// The top-level folder an include of `file` (a path relative to the source root) reaches: a quoted path relative to
// the file's own folder when it starts with ./ or ../ or names a file there, else a path from the root.
std::string included_dir(const fs::path& root, const std::string& file, const std::string& inc) {
    fs::path p = inc;
    const fs::path beside = fs::path(file).parent_path() / inc;
    if (inc.rfind("./", 0) == 0 || inc.rfind("../", 0) == 0 || fs::exists(root / beside)) p = beside.lexically_normal();
    return p.begin() == p.end() ? "" : p.begin()->string();
}

// Every include in `text` (the contents of `file`, relative to the source root) that reaches a higher layer than
// the file's own, as "file:line: #include "X/..." reaches X, above <layer>".
std::vector<std::string> upward_includes(const fs::path& root, const std::string& file, const std::string& text) {
    std::vector<std::string> found;
    const std::string own = fs::path(file).begin()->string();
    const int own_rank = rank_of(own);
    if (own_rank < 0 || own_rank >= static_cast<int>(kLayers.size())) return found;  // bench, fuzz, tests: anything
    std::istringstream in(text);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
        const std::string inc = included_path(line);
        if (inc.empty()) continue;
        const std::string dir = included_dir(root, file, inc);
        if (rank_of(dir) > own_rank)
            found.push_back(file + ":" + std::to_string(n) + ": #include \"" + inc + "\" reaches " + dir + "/, above " +
                            own + "/ (order: hardware < placement < sim < models < planner < reports < cli)");
    }
    return found;
}

std::string read(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

bool is_source(const fs::path& p) {
    static const std::vector<std::string> ext = {".cpp", ".hpp", ".h", ".cc", ".cu", ".cuh", ".inc", ".ipp"};
    return std::find(ext.begin(), ext.end(), p.extension().string()) != ext.end();
}

}  // namespace

TEST_CASE("layers: the checker flags an upward include, with its file and line, and passes the allowed ones") {
    const fs::path root = PODSIM_SOURCE_DIR;
    const std::string fake =
        "#include \"models/step.hpp\"\n"            // own layer
        "#include \"sim/engine.hpp\"\n"             // below
        "// #include \"cli/commands.hpp\"\n"        // a comment
        "#include <vector>\n"                       // a system header
        "#include \"reports/report.hpp\"\n"         // above: line 5
        "  #  include <planner/search.hpp>\n"       // above, spaced and bracketed: line 6
        "#include \"../tests/helpers.hpp\"\n";      // above, relative: line 7
    const auto v = upward_includes(root, "models/fake.cpp", fake);
    REQUIRE(v.size() == 3);
    CHECK(v[0].rfind("models/fake.cpp:5: #include \"reports/report.hpp\" reaches reports/, above models/", 0) == 0);
    CHECK(v[1].rfind("models/fake.cpp:6:", 0) == 0);
    CHECK(v[2].rfind("models/fake.cpp:7:", 0) == 0);
    CHECK(v[2].find("reaches tests/") != std::string::npos);
    // A lower layer may not reach the planner; cli may reach every layer; tests may include anything.
    CHECK(upward_includes(root, "sim/fake.cpp", "#include \"planner/cost.hpp\"\n").size() == 1);
    CHECK(upward_includes(root, "hardware/calibration/fake.cpp", "#include \"models/step.hpp\"\n").size() == 1);
    CHECK(upward_includes(root, "cli/fake.cpp", "#include \"reports/report.hpp\"\n#include \"planner/search.hpp\"\n").empty());
    CHECK(upward_includes(root, "reports/fake.cpp", "#include \"planner/search.hpp\"\n").empty());
    CHECK(upward_includes(root, "tests/fake.cpp", "#include \"cli/commands.hpp\"\n").empty());
    // A quoted name found beside the file is that file, whatever its first folder is called.
    CHECK(upward_includes(root, "models/fake.cpp", "#include \"step.hpp\"\n").empty());
}

TEST_CASE("layers: no source file includes a layer above its own") {
    const fs::path root = PODSIM_SOURCE_DIR;
    std::vector<std::string> found;
    size_t files = 0;
    for (size_t k = 0; k < kLayers.size(); ++k) {
        const fs::path dir = root / kLayers[k];
        INFO("layer folder " << dir.string());
        REQUIRE(fs::is_directory(dir));
        size_t here = 0;
        for (const auto& e : fs::recursive_directory_iterator(dir)) {
            if (!e.is_regular_file() || !is_source(e.path())) continue;
            ++here;
            const std::string rel = e.path().lexically_relative(root).generic_string();
            for (auto& f : upward_includes(root, rel, read(e.path()))) found.push_back(std::move(f));
        }
        CHECK_MESSAGE(here > 0, kLayers[k] << "/ holds no source file");
        files += here;
    }
    std::string all;
    for (const auto& f : found) all += "\n  " + f;
    INFO("upward includes:" << all);
    CHECK(found.empty());
    CHECK(files > 50);  // the walk saw the tree, not an empty folder
}

TEST_CASE("layers: the build's layer views follow the same order") {
    // CMakeLists.txt gives each layer library an include path of its own layer and those below it, in the order
    // of PODSIM_LAYERS; it must be this test's order (cli, an executable, sees the whole root).
    const std::string cmake = read(fs::path(PODSIM_SOURCE_DIR) / "CMakeLists.txt");
    const std::string key = "set(PODSIM_LAYERS ";
    const size_t at = cmake.find(key);
    REQUIRE(at != std::string::npos);
    std::istringstream in(cmake.substr(at + key.size(), cmake.find(')', at) - at - key.size()));
    std::vector<std::string> layers;
    for (std::string w; in >> w;) layers.push_back(w);
    layers.push_back("cli");
    CHECK(layers == kLayers);
}
