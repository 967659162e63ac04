// Errors for malformed input: every message names the file, the JSON path and what was expected.
#pragma once
#include <stdexcept>
#include <string>

namespace podsim {

class InputError : public std::runtime_error {
public:
    InputError(const std::string& file, const std::string& json_path, const std::string& what)
        : std::runtime_error(file + ": " + json_path + ": " + what), file_(file), json_path_(json_path) {}
    const std::string& file() const { return file_; }
    const std::string& json_path() const { return json_path_; }

private:
    std::string file_;
    std::string json_path_;
};

}  // namespace podsim
