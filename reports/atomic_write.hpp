// Output files written whole or not at all. Every file podsim writes (--out, --csv, --json, report directories)
// goes through here: the text goes to a uniquely named temporary beside the target (same directory, so the final
// rename(2) is atomic and never crosses a file system), and only a complete, synced file is renamed into place.
// Targets that a rename would destroy are refused instead: directories, devices, fifos, sockets and symbolic links
// (podsim does not write through a link: as root, following a link planted in a shared directory would overwrite
// whatever it points at). On any failure the temporary is removed and the target is left as it was.
#pragma once
#include <stdexcept>
#include <string>

namespace podsim {

// An output path that cannot be written; the message names the path and why. The CLI reports it as a usage error.
class OutputError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Writes `text` to `path` (absent or a regular file; its permission bits are kept, a new file gets 0666 & ~umask).
void write_file_atomically(const std::string& path, const std::string& text);
// The checks write_file_atomically makes before writing, alone: commands run them before long work, so that a bad
// --out is reported at once rather than after a search.
void check_output_file(const std::string& path);

// A directory of outputs built whole: files go into a temporary directory beside `target` and commit() renames
// it onto `target` in one step. `target` may be absent, an empty directory, or a directory that holds only what
// `is_replaceable` accepts (e.g. a previous report, which is then replaced); anything else is refused up front.
// Destroyed without commit() (an error part-way), the temporary directory and everything in it is removed.
class StagedDir {
public:
    // `replaceable(entry)` says whether a relative path found in an existing `target` may be discarded.
    StagedDir(const std::string& target, bool (*replaceable)(const std::string& relative_path), const std::string& what);
    ~StagedDir();
    StagedDir(const StagedDir&) = delete;
    StagedDir& operator=(const StagedDir&) = delete;

    // Writes `text` at `relative_path` inside the staged directory, creating subdirectories as needed.
    void write(const std::string& relative_path, const std::string& text);
    // Puts the staged directory in place of the target (an old one is swapped out and removed).
    void commit();
    const std::string& staging_path() const { return staging_; }

    // The constructor's checks alone, for commands that check before long work and stage afterwards.
    static void check(const std::string& target, bool (*replaceable)(const std::string& relative_path),
                      const std::string& what);

private:
    std::string target_, staging_, what_;
    bool (*replaceable_)(const std::string&) = nullptr;
    bool committed_ = false;
};

}  // namespace podsim
