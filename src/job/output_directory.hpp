#pragma once
// The output directory of a run as one unit: it holds one run's outputs, never a mix of
// two runs' (issue 34, item 6).
// - One run at a time writes it: `.tilevit.lock` inside is an advisory lock (flock) held
//   while the run writes; it is not a result, stays empty, and may be deleted when no run
//   is writing.
// - Opening it removes every output an earlier run may have left (run.json first, then the
//   embeddings, the package, the profile, the viewers and the memory maps), except an
//   input of this run (a `--package` kept there).
// - A run that does not commit (an error) removes every output it wrote, and the
//   directory too if it created it: the directory is as the last successful run left it,
//   less that run's outputs, which the new run had already removed.
// run.json lists every output with its size and SHA-256.
#include <string>
#include <vector>

namespace tilevit::job {

// The names of every file a run may write into its directory, besides a pipeline's
// memory-stage<N>.json, .png and .html (is_stage_memory_output).
const std::vector<std::string>& run_output_names();
bool is_stage_memory_output(const std::string& name);

class OutputDirectory {
 public:
  // Creates `dir` if missing; Error(kExitResource) when it is a file, not writable, or
  // another run holds it. `inputs`: files this run reads, kept even if named as an output.
  explicit OutputDirectory(const std::string& dir, const std::vector<std::string>& inputs = {});
  ~OutputDirectory();
  OutputDirectory(const OutputDirectory&) = delete;
  OutputDirectory& operator=(const OutputDirectory&) = delete;

  const std::string& dir() const { return dir_; }
  std::string path(const std::string& name) const;
  // The path of output `name`, which this run is about to write: removed again if the
  // run does not commit.
  std::string output(const std::string& name);
  // The run completed (passed or not): its outputs stay.
  void commit() { committed_ = true; }

 private:
  std::string dir_;
  int lock_fd_ = -1;
  std::vector<std::string> created_;  // the directories this run created, deepest first
  bool committed_ = false;
  std::vector<std::string> written_;
};

// SHA-256 of a file's bytes, 64 hex digits.
std::string file_sha256(const std::string& path);

}  // namespace tilevit::job
