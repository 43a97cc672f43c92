#pragma once
// The output directory of `tilevit run` as one unit: one run at a time writes it (a lock
// file inside), the previous run.json is removed before anything else is written (so an
// interrupted run leaves no report describing other files), and the new run.json lists
// every output with its size and SHA-256 (so a directory mixing two runs is detectable).
#include <nlohmann/json.hpp>
#include <string>

namespace tilevit::cli {

class OutputDirectory {
 public:
  // Creates `dir` if missing; Error(kExitResource) when it is a file, not writable, or
  // another run holds it.
  explicit OutputDirectory(const std::string& dir);
  ~OutputDirectory();
  OutputDirectory(const OutputDirectory&) = delete;
  OutputDirectory& operator=(const OutputDirectory&) = delete;

  std::string path(const std::string& name) const;
  // Adds {path, bytes, sha256} of an output just written under `name` (a path) to `files`.
  static void record(nlohmann::json& files, const std::string& name, const std::string& path);

 private:
  std::string dir_;
  int lock_fd_ = -1;
};

// SHA-256 of a file's bytes, 64 hex digits.
std::string file_sha256(const std::string& path);

}  // namespace tilevit::cli
