#include "reports/atomic_write.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>  // renameat2, RENAME_EXCHANGE (glibc >= 2.28, _GNU_SOURCE)
#include <cstring>
#include <filesystem>

namespace podsim {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const std::string& shown, const std::string& reason) {
    throw OutputError("cannot write " + shown + ": " + reason);
}

std::string errno_text() { return std::strerror(errno); }

// "out/" and "out" name the same target; the trailing slash would leave an empty file name.
std::string strip_slashes(std::string p) {
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    return p;
}

std::string parent_of(const std::string& path) {
    const fs::path parent = fs::path(path).parent_path();
    return parent.empty() ? "." : parent.string();
}

// The directory that will hold the temporary must exist: podsim does not create parents it might leave behind.
void check_parent(const std::string& path, const std::string& shown) {
    const std::string dir = parent_of(path);
    struct stat st;
    if (::stat(dir.c_str(), &st) != 0) fail(shown, "directory " + dir + ": " + errno_text());
    if (!S_ISDIR(st.st_mode)) fail(shown, dir + " is not a directory");
}

// A hidden name beside `path` that says whose temporary it is; mkstemp/mkdtemp make it unique.
std::string temp_template(const std::string& path, const char* tag) {
    const fs::path p(path);
    std::string name = ".";  // appended piecewise: GCC 12 warns falsely (-Wrestrict) on "." + std::string
    name += p.filename().string();
    name += tag;
    name += "XXXXXX";
    return (p.parent_path() / name).string();
}

// lstat of a file target: false when absent; throws when a rename over it would destroy something else.
bool check_file_target(const std::string& path, const std::string& shown, struct stat* st) {
    if (path.empty()) fail("\"\"", "empty path");
    if (::lstat(path.c_str(), st) != 0) {
        if (errno != ENOENT) fail(shown, errno_text());
        check_parent(path, shown);
        return false;
    }
    if (S_ISLNK(st->st_mode))
        fail(shown, "it is a symbolic link (podsim does not write through links; give the path of the file itself)");
    if (S_ISDIR(st->st_mode)) fail(shown, "it is a directory");
    if (!S_ISREG(st->st_mode)) fail(shown, "it is not a regular file (a device, fifo or socket); podsim writes only regular files");
    return true;
}

// The temporary file: closed and removed on every path that does not end in a successful rename.
struct TempFile {
    std::string path;
    int fd = -1;
    bool renamed = false;
    ~TempFile() {
        if (fd >= 0) ::close(fd);
        if (!renamed && !path.empty()) ::unlink(path.c_str());
    }
};

void write_atomically(const std::string& path, const std::string& text, const std::string& shown) {
    // A file-size limit (ulimit -f) must be a write error we clean up after, not a signal that kills us mid-write.
    static const bool ignore_xfsz = (std::signal(SIGXFSZ, SIG_IGN), true);
    (void)ignore_xfsz;
    struct stat st;
    const bool exists = check_file_target(path, shown, &st);
    TempFile tmp;
    tmp.path = temp_template(path, ".podsim-");
    tmp.fd = ::mkstemp(tmp.path.data());
    if (tmp.fd < 0) {
        tmp.path.clear();
        fail(shown, "cannot create a temporary file in " + parent_of(path) + ": " + errno_text());
    }
    // mkstemp makes the file 0600; give it the mode (and, as root, the owner) the target has or a new file would get.
    mode_t mode;
    if (exists) {
        mode = st.st_mode & 07777;
        [[maybe_unused]] const int owner_kept = ::fchown(tmp.fd, st.st_uid, st.st_gid);  // fails harmlessly unless root
    } else {
        const mode_t mask = ::umask(0);
        ::umask(mask);
        mode = 0666 & ~mask;
    }
    if (::fchmod(tmp.fd, mode) != 0) fail(shown, errno_text());
    for (size_t done = 0; done < text.size();) {
        const ssize_t n = ::write(tmp.fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) fail(shown, errno_text());  // ENOSPC, EFBIG, EIO, ...
        done += static_cast<size_t>(n);
    }
    // Data on disk before the name points at it: a crash leaves the old file or the new one, never a torn one.
    if (::fsync(tmp.fd) != 0) fail(shown, errno_text());
    const int fd = tmp.fd;
    tmp.fd = -1;
    if (::close(fd) != 0) fail(shown, errno_text());
    // The target may have changed while we wrote (e.g. replaced by a link): check again right before the rename.
    check_file_target(path, shown, &st);
    if (::rename(tmp.path.c_str(), path.c_str()) != 0) fail(shown, errno_text());
    tmp.renamed = true;
}

// Throws unless `target` is absent, or a directory whose every entry `replaceable` accepts.
void check_dir_target(const std::string& target, bool (*replaceable)(const std::string&), const std::string& what) {
    struct stat st;
    if (::lstat(target.c_str(), &st) != 0) {
        if (errno != ENOENT) fail(target, errno_text());
        check_parent(target, target);
        return;
    }
    if (S_ISLNK(st.st_mode))
        fail(target, "it is a symbolic link (podsim does not write through links; give the directory itself)");
    if (!S_ISDIR(st.st_mode)) fail(target, "it exists and is not a directory");
    check_parent(target, target);
    try {
        for (const auto& e : fs::recursive_directory_iterator(target)) {
            const std::string rel = e.path().lexically_relative(target).generic_string();
            if (!replaceable(rel))
                fail(target, "it exists and is not a previous " + what + " (it holds " + rel +
                                 "); give a new directory, or remove this one");
        }
    } catch (const fs::filesystem_error& e) {
        fail(target, e.code().message());
    }
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& text) {
    write_atomically(path, text, path);
}

void check_output_file(const std::string& path) {
    struct stat st;
    check_file_target(path, path, &st);
}

void StagedDir::check(const std::string& target, bool (*replaceable)(const std::string&), const std::string& what) {
    const std::string t = strip_slashes(target);
    if (t.empty()) fail("\"\"", "empty path");
    check_dir_target(t, replaceable, what);
}

StagedDir::StagedDir(const std::string& target, bool (*replaceable)(const std::string&), const std::string& what)
    : target_(strip_slashes(target)) {
    if (target_.empty()) fail("\"\"", "empty path");
    check_dir_target(target_, replaceable, what);
    replaceable_ = replaceable;
    what_ = what;
    std::string tmpl = temp_template(target_, ".podsim-");
    if (!::mkdtemp(tmpl.data())) fail(target_, "cannot create a temporary directory in " + parent_of(target_) + ": " + errno_text());
    staging_ = tmpl;
    // mkdtemp makes it 0700; the directory it becomes gets the mode a new directory would have.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    if (::chmod(staging_.c_str(), 0777 & ~mask) != 0) fail(target_, errno_text());
}

StagedDir::~StagedDir() {
    if (committed_ || staging_.empty()) return;
    std::error_code ec;
    fs::remove_all(staging_, ec);
}

void StagedDir::write(const std::string& relative_path, const std::string& text) {
    const fs::path p = fs::path(staging_) / relative_path;
    const std::string shown = (fs::path(target_) / relative_path).string();
    std::error_code ec;
    fs::create_directories(p.parent_path(), ec);
    if (ec) fail(shown, ec.message());
    write_atomically(p.string(), text, shown);
}

void StagedDir::commit() {
    // Checked again: something may have appeared in the target since the constructor looked.
    check_dir_target(target_, replaceable_, what_);
    // Absent or empty target: one rename puts the whole directory in place.
    if (::rename(staging_.c_str(), target_.c_str()) == 0) {
        committed_ = true;
        return;
    }
    if (errno != ENOTEMPTY && errno != EEXIST) fail(target_, errno_text());
    // A previous report: swap the two directories in one step, then remove the old one from the staging name.
    if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) == 0) {
        committed_ = true;
        std::error_code ec;
        fs::remove_all(staging_, ec);
        return;
    }
    // A file system without RENAME_EXCHANGE: move the old one aside, move the new one in, and undo on failure.
    std::string aside = temp_template(target_, ".podsim-old-");
    if (!::mkdtemp(aside.data())) fail(target_, "cannot move the previous " + what_ + " aside: " + errno_text());
    if (::rename(target_.c_str(), aside.c_str()) != 0) {
        const std::string why = errno_text();
        ::rmdir(aside.c_str());
        fail(target_, "cannot move the previous " + what_ + " aside: " + why);
    }
    if (::rename(staging_.c_str(), target_.c_str()) != 0) {
        const std::string why = errno_text();
        ::rename(aside.c_str(), target_.c_str());
        fail(target_, why);
    }
    committed_ = true;
    std::error_code ec;
    fs::remove_all(aside, ec);
}

}  // namespace podsim
