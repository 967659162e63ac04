// Output files written whole or not at all, and never over something that is not a regular file (issue #10, item 10):
// the safe writer itself (reports/atomic_write), then every command's --out / --csv / --json through the CLI.
#include <doctest/doctest.h>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <functional>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "reports/atomic_write.hpp"
#include "tests/helpers.hpp"

namespace fs = std::filesystem;
using namespace podsim::test;

namespace {

// A fresh, empty directory for one test case.
std::string fresh_dir(const std::string& name) {
    const std::string d = temp_dir() + "/out-files-" + name;
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

// Names in `dir` (not recursive), sorted: what a failed or successful write left behind.
std::vector<std::string> entries(const std::string& dir) {
    std::vector<std::string> v;
    for (const auto& e : fs::directory_iterator(dir)) v.push_back(e.path().filename().string());
    std::sort(v.begin(), v.end());
    return v;
}

bool is_char_device(const std::string& path) {
    struct stat st;
    return ::lstat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

// Runs `f` in a child process whose file-size limit is `limit_bytes`, so that writes fail part-way (EFBIG) as they
// would on a full disk; returns the child's exit status (0: `f` returned true).
int with_file_size_limit(rlim_t limit_bytes, const std::function<bool()>& f) {
    const pid_t pid = ::fork();
    if (pid == 0) {
        struct rlimit rl{limit_bytes, limit_bytes};
        ::setrlimit(RLIMIT_FSIZE, &rl);
        std::signal(SIGXFSZ, SIG_IGN);
        ::_exit(f() ? 0 : 1);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool previous_report_file(const std::string& rel) { return rel == "report.md" || rel == "charts" || rel == "charts/a.svg"; }

}  // namespace

TEST_CASE("write_file_atomically: a new file and a replaced one, whole, with no temporary left") {
    const std::string dir = fresh_dir("unit-new");
    podsim::write_file_atomically(dir + "/a.json", "{\"x\": 1}\n");
    CHECK(slurp(dir + "/a.json") == "{\"x\": 1}\n");
    // A replaced file keeps its permission bits.
    ::chmod((dir + "/a.json").c_str(), 0640);
    podsim::write_file_atomically(dir + "/a.json", "{\"x\": 2}\n");
    CHECK(slurp(dir + "/a.json") == "{\"x\": 2}\n");
    struct stat st;
    REQUIRE(::stat((dir + "/a.json").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0640);
    CHECK(entries(dir) == std::vector<std::string>{"a.json"});
    // An empty text is a valid (empty) file.
    podsim::write_file_atomically(dir + "/empty.txt", "");
    CHECK(fs::file_size(dir + "/empty.txt") == 0);
}

TEST_CASE("write_file_atomically refuses directories, devices, fifos, links and missing parents, touching nothing") {
    const std::string dir = fresh_dir("unit-refuse");
    auto refused = [&](const std::string& path, const std::string& why) {
        CAPTURE(path);
        try {
            podsim::write_file_atomically(path, "text");
            FAIL("accepted " << path);
        } catch (const podsim::OutputError& e) {
            const std::string msg = e.what();
            CHECK(msg.find("cannot write " + path + ": ") != std::string::npos);
            CHECK(msg.find(why) != std::string::npos);
        }
        CHECK_THROWS_AS(podsim::check_output_file(path), podsim::OutputError);
    };
    fs::create_directories(dir + "/sub");
    refused(dir + "/sub", "is a directory");
    REQUIRE(::mkfifo((dir + "/fifo").c_str(), 0644) == 0);
    refused(dir + "/fifo", "not a regular file");
    refused("/dev/null", "not a regular file");
    CHECK(is_char_device("/dev/null"));
    podsim::write_file_atomically(dir + "/target.txt", "original");
    fs::create_symlink(dir + "/target.txt", dir + "/link");
    refused(dir + "/link", "symbolic link");
    CHECK(fs::is_symlink(dir + "/link"));
    CHECK(slurp(dir + "/target.txt") == "original");
    fs::create_symlink(dir + "/nowhere", dir + "/dangling");
    refused(dir + "/dangling", "symbolic link");
    refused(dir + "/missing-dir/x.json", "No such file or directory");
    refused(dir + "/target.txt/x.json", "");  // a file as a directory
    CHECK(entries(dir) == std::vector<std::string>{"dangling", "fifo", "link", "sub", "target.txt"});
    CHECK(fs::is_empty(dir + "/sub"));
}

TEST_CASE("write_file_atomically: a write that fails part-way removes its temporary and keeps the old file") {
    const std::string dir = fresh_dir("unit-efbig");
    podsim::write_file_atomically(dir + "/out.json", "old contents\n");
    const std::string big(64 * 1024, 'x');
    const int rc = with_file_size_limit(4096, [&] {
        try {
            podsim::write_file_atomically(dir + "/out.json", big);
        } catch (const podsim::OutputError& e) {
            return std::string(e.what()).find("cannot write " + dir + "/out.json: File too large") != std::string::npos;
        }
        return false;
    });
    CHECK(rc == 0);
    CHECK(slurp(dir + "/out.json") == "old contents\n");
    CHECK(entries(dir) == std::vector<std::string>{"out.json"});
}

TEST_CASE("StagedDir: a new directory whole, a previous one replaced, a foreign one refused, a failure leaves nothing") {
    const std::string dir = fresh_dir("unit-staged");
    {
        podsim::StagedDir d(dir + "/rep/", previous_report_file, "report");  // a trailing slash names the same DIR
        d.write("report.md", "one");
        d.write("charts/a.svg", "<svg/>");
        CHECK(!fs::exists(dir + "/rep"));  // nothing visible before commit
        d.commit();
    }
    CHECK(slurp(dir + "/rep/report.md") == "one");
    CHECK(slurp(dir + "/rep/charts/a.svg") == "<svg/>");
    CHECK(entries(dir) == std::vector<std::string>{"rep"});
    {
        podsim::StagedDir d(dir + "/rep", previous_report_file, "report");
        d.write("report.md", "two");
        d.commit();
    }
    CHECK(slurp(dir + "/rep/report.md") == "two");
    CHECK(!fs::exists(dir + "/rep/charts"));  // replaced whole, not merged
    CHECK(entries(dir) == std::vector<std::string>{"rep"});
    // Not committed (an error part-way): nothing is left, and the old directory is untouched.
    {
        podsim::StagedDir d(dir + "/rep", previous_report_file, "report");
        d.write("report.md", "three");
    }
    CHECK(slurp(dir + "/rep/report.md") == "two");
    CHECK(entries(dir) == std::vector<std::string>{"rep"});
    // A directory with anything else in it is refused, with the entry named.
    podsim::write_file_atomically(dir + "/rep/notes.txt", "mine");
    try {
        podsim::StagedDir d(dir + "/rep", previous_report_file, "report");
        FAIL("accepted a directory with notes.txt");
    } catch (const podsim::OutputError& e) {
        CHECK(std::string(e.what()).find("not a previous report (it holds notes.txt)") != std::string::npos);
    }
    CHECK(slurp(dir + "/rep/notes.txt") == "mine");
    // A file, a link and a missing parent are refused; an empty directory is accepted.
    CHECK_THROWS_AS(podsim::StagedDir(dir + "/rep/notes.txt", previous_report_file, "report"), podsim::OutputError);
    fs::create_directory_symlink(dir + "/rep", dir + "/link");
    CHECK_THROWS_AS(podsim::StagedDir(dir + "/link", previous_report_file, "report"), podsim::OutputError);
    CHECK_THROWS_AS(podsim::StagedDir(dir + "/no/such", previous_report_file, "report"), podsim::OutputError);
    fs::create_directories(dir + "/empty");
    {
        podsim::StagedDir d(dir + "/empty", previous_report_file, "report");
        d.write("report.md", "into an empty directory");
        d.commit();
    }
    CHECK(slurp(dir + "/empty/report.md") == "into an empty directory");
    CHECK(entries(dir) == std::vector<std::string>{"empty", "link", "rep"});
    // A write failing part-way (file-size limit): no staged directory left, the old report untouched.
    const int rc = with_file_size_limit(4096, [&] {
        try {
            podsim::StagedDir d(dir + "/empty", previous_report_file, "report");
            d.write("charts/a.svg", "<svg/>");
            d.write("report.md", std::string(64 * 1024, 'x'));
            d.commit();
        } catch (const podsim::OutputError&) {
            return true;
        }
        return false;
    });
    CHECK(rc == 0);
    CHECK(slurp(dir + "/empty/report.md") == "into an empty directory");
    CHECK(entries(dir) == std::vector<std::string>{"empty", "link", "rep"});
}

TEST_CASE("--out refuses devices, directories, links and missing directories with exit 2, leaving nothing") {
    const std::string dir = fresh_dir("cli");
    const std::string scen = scenario("seed-1.2t-v4-2048.json");
    // As root, the old writer replaced /dev/null with a regular file.
    auto devnull = run_podsim("run " + scen + " --out /dev/null");
    CHECK(devnull.exit_code == 2);
    CHECK(devnull.err.find("cannot write /dev/null: it is not a regular file") != std::string::npos);
    CHECK(is_char_device("/dev/null"));

    fs::create_directories(dir + "/existing");
    auto d = run_podsim("run " + scen + " --format json --out " + dir + "/existing");
    CHECK(d.exit_code == 2);
    CHECK(d.err.find("cannot write " + dir + "/existing: it is a directory") != std::string::npos);
    CHECK(fs::is_empty(dir + "/existing"));

    write_file(dir + "/target.json", "original");
    fs::create_symlink(dir + "/target.json", dir + "/link.json");
    auto l = run_podsim("run " + scen + " --out " + dir + "/link.json");
    CHECK(l.exit_code == 2);
    CHECK(l.err.find("symbolic link") != std::string::npos);
    CHECK(fs::is_symlink(dir + "/link.json"));
    CHECK(slurp(dir + "/target.json") == "original");

    auto missing = run_podsim("run " + scen + " --out /nonexistent-dir/x.json");
    CHECK(missing.exit_code == 2);
    CHECK(missing.err.find("cannot write /nonexistent-dir/x.json: directory /nonexistent-dir: No such file or directory") !=
          std::string::npos);
    CHECK(!fs::exists("/nonexistent-dir"));
    CHECK(entries(dir) == std::vector<std::string>{"existing", "link.json", "target.json"});

    // Every command's output paths go through the same checks, before any work is done.
    for (const std::string& cmd :
         std::vector<std::string>{"search " + scen + " --out " + dir + "/existing", "check x.json --out " + dir + "/existing",
          "validate x.json --out " + dir + "/existing", "fit x.json --chip tpu-v4 --precision 16bit --out " + dir + "/existing",
          "calibrate " + scen + " --out " + dir + "/existing --budget-s 5", "sweep x.json --csv " + dir + "/existing",
          "sweep x.json --json /dev/null", "report " + scen + " --out " + dir + "/target.json",
          "report " + scen + " --out " + dir + "/link.json"}) {
        CAPTURE(cmd);
        auto r = run_podsim(cmd);
        CHECK(r.exit_code == 2);
        CHECK(r.err.find("cannot write ") != std::string::npos);
    }
    CHECK(entries(dir) == std::vector<std::string>{"existing", "link.json", "target.json"});
}

TEST_CASE("--out: a successful write leaves exactly the file; a failed write leaves the old file and no temporary") {
    const std::string dir = fresh_dir("cli-write");
    const std::string scen = scenario("seed-1.2t-v4-2048.json");
    auto ok = run_podsim("run " + scen + " --format json --out " + dir + "/run.json");
    REQUIRE(ok.exit_code == 0);
    CHECK(podsim::Json::parse(slurp(dir + "/run.json"))["feasible"] == true);
    CHECK(entries(dir) == std::vector<std::string>{"run.json"});
    const std::string before = slurp(dir + "/run.json");
    // A 512-byte file-size limit (ulimit -f 1): the JSON does not fit, as on a full disk.
    const std::string err = dir + "/../cli-write.err";
    const std::string cmd = "sh -c 'ulimit -f 1; exec " + std::string(PODSIM_BINARY) + " run " + scen +
                            " --format text --out " + dir + "/run.json' >/dev/null 2>" + err;
    const int status = std::system(cmd.c_str());
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 2);
    CHECK(slurp(err).find("cannot write " + dir + "/run.json: File too large") != std::string::npos);
    CHECK(slurp(dir + "/run.json") == before);
    CHECK(entries(dir) == std::vector<std::string>{"run.json"});
}

TEST_CASE("report --out DIR: built beside DIR and renamed whole; a previous report replaced, anything else refused") {
    const std::string dir = fresh_dir("cli-report");
    const std::string scen = scenario("seed-1.2t-v4-2048.json");
    auto r = run_podsim("report " + scen + " --out " + dir + "/rep --top 3 --scales 1 --no-progress");
    REQUIRE(r.exit_code == 0);
    CHECK(entries(dir) == std::vector<std::string>{"rep"});
    CHECK(fs::exists(dir + "/rep/report.md"));
    CHECK(fs::exists(dir + "/rep/report.html"));
    CHECK(!fs::is_empty(dir + "/rep/charts"));
    for (const auto& e : fs::recursive_directory_iterator(dir + "/rep")) {
        CAPTURE(e.path().string());
        CHECK(e.path().string().find(".tmp") == std::string::npos);
        CHECK(e.path().string().find(".podsim-") == std::string::npos);
    }
    // Again into the same DIR, with a trace: the previous report is replaced.
    auto again = run_podsim("report " + scen + " --out " + dir + "/rep --top 3 --scales 1 --no-progress --trace");
    REQUIRE(again.exit_code == 0);
    CHECK(fs::exists(dir + "/rep/trace.json"));
    CHECK(entries(dir) == std::vector<std::string>{"rep"});
    // A directory holding anything else is refused before any work, and left as it was.
    write_file(dir + "/rep/mine.txt", "keep me");
    auto refused = run_podsim("report " + scen + " --out " + dir + "/rep --top 3 --scales 1 --no-progress");
    CHECK(refused.exit_code == 2);
    CHECK(refused.err.find("not a previous podsim report (it holds mine.txt)") != std::string::npos);
    CHECK(slurp(dir + "/rep/mine.txt") == "keep me");
    CHECK(fs::exists(dir + "/rep/trace.json"));
    // Bad input part-way: exit 1 and nothing new beside DIR.
    write_file(dir + "/../bad-report.json", "{\"schema_version\": 1, \"name\": 3}");
    auto bad = run_podsim("report " + dir + "/../bad-report.json --out " + dir + "/new");
    CHECK(bad.exit_code == 1);
    CHECK(entries(dir) == std::vector<std::string>{"rep"});
}
