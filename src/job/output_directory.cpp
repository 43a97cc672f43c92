#include "job/output_directory.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string_view>

#include "package/sha256.hpp"
#include "support/atomic_file.hpp"
#include "support/error.hpp"

namespace tilevit::job {
namespace fs = std::filesystem;
namespace {

const char* const kLock = ".tilevit.lock";

bool is_input(const fs::path& file, const std::vector<std::string>& inputs) {
  std::error_code ec;
  return std::any_of(inputs.begin(), inputs.end(), [&](const std::string& input) {
    return !input.empty() && fs::equivalent(file, input, ec);
  });
}

}  // namespace

const std::vector<std::string>& run_output_names() {
  static const std::vector<std::string> names = {"run.json",   "embeddings.npy", "model.tvpkg", "profile.tvprof",
                                                 "model.html", "trace.json",     "memory.json", "memory.png",
                                                 "memory.html", "compare.html"};
  return names;
}

bool is_stage_memory_output(const std::string& name) {
  constexpr std::string_view prefix = "memory-stage";
  if (name.rfind(prefix, 0) != 0) return false;
  std::size_t i = prefix.size();
  while (i < name.size() && name[i] >= '0' && name[i] <= '9') ++i;
  const std::string_view rest = std::string_view(name).substr(i);
  return i > prefix.size() && (rest == ".json" || rest == ".png" || rest == ".html");
}

OutputDirectory::OutputDirectory(const std::string& dir, const std::vector<std::string>& inputs) : dir_(dir) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw Error("--out " + dir + ": exists and is not a directory", kExitResource);
  for (fs::path p = fs::absolute(dir, ec).lexically_normal(); !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    created_.push_back(p.string());  // deepest first
    if (p == p.parent_path()) break;
  }
  fs::create_directories(dir, ec);
  if (ec) throw Error("--out " + dir + ": cannot create the directory: " + ec.message(), kExitResource);
  if (::access(dir.c_str(), W_OK | X_OK) != 0) throw Error("--out " + dir + ": directory is not writable", kExitResource);
  const std::string lock = path(kLock);
  lock_fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) throw Error("--out " + dir + ": cannot create " + lock, kExitResource);
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(lock_fd_);
    lock_fd_ = -1;
    throw Error("--out " + dir + ": another tilevit run is writing this directory (use another --out)", kExitResource);
  }
  sweep_stale_temporaries(dir);
  // run.json first: an interrupted clean-up leaves no report describing other files.
  std::vector<std::string> names = run_output_names();
  for (const auto& entry : fs::directory_iterator(dir, ec))  // a pipeline's memory-stage<N>.*
    if (is_stage_memory_output(entry.path().filename().string())) names.push_back(entry.path().filename().string());
  for (const std::string& name : names) {
    const fs::path file = path(name);
    if (!is_input(file, inputs) && fs::is_regular_file(fs::symlink_status(file, ec)) && !fs::remove(file, ec) && ec)
      throw Error("--out " + dir + ": cannot remove " + name + " of an earlier run: " + ec.message(), kExitResource);
  }
}

OutputDirectory::~OutputDirectory() {
  std::error_code ec;
  if (!committed_) {
    for (const std::string& file : written_) fs::remove(file, ec);
    if (!created_.empty()) fs::remove(path(kLock), ec);
  }
  if (lock_fd_ >= 0) ::close(lock_fd_);  // closing releases the lock
  if (!committed_)
    for (const std::string& d : created_) fs::remove(d, ec);  // only if empty: another's file stays
}

std::string OutputDirectory::path(const std::string& name) const { return (fs::path(dir_) / name).string(); }

std::string OutputDirectory::output(const std::string& name) {
  std::string file = path(name);
  if (std::find(written_.begin(), written_.end(), file) == written_.end()) written_.push_back(file);
  return file;
}

std::string file_sha256(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot read back", kExitResource);
  package::Sha256 hash;
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    hash.update(std::string_view(buffer.data(), static_cast<std::size_t>(in.gcount())));
  }
  return package::to_hex(hash.finish());
}

}  // namespace tilevit::job
