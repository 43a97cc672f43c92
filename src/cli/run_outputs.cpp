#include "cli/run_outputs.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "package/sha256.hpp"
#include "support/atomic_file.hpp"
#include "support/error.hpp"

namespace tilevit::cli {
namespace fs = std::filesystem;

OutputDirectory::OutputDirectory(const std::string& dir) : dir_(dir) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw Error("--out " + dir + ": exists and is not a directory", kExitResource);
  fs::create_directories(dir, ec);
  if (ec) throw Error("--out " + dir + ": cannot create the directory: " + ec.message(), kExitResource);
  if (::access(dir.c_str(), W_OK | X_OK) != 0) throw Error("--out " + dir + ": directory is not writable", kExitResource);
  const std::string lock = path(".tilevit.lock");
  lock_fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) throw Error("--out " + dir + ": cannot create " + lock, kExitResource);
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(lock_fd_);
    throw Error("--out " + dir + ": another tilevit run is writing this directory (use another --out)", kExitResource);
  }
  sweep_stale_temporaries(dir);
  fs::remove(path("run.json"), ec);  // of an older run: it would describe files about to change
}

OutputDirectory::~OutputDirectory() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // closing releases the lock
}

std::string OutputDirectory::path(const std::string& name) const { return (fs::path(dir_) / name).string(); }

void OutputDirectory::record(nlohmann::json& files, const std::string& name, const std::string& path) {
  files[name] = {{"path", path}, {"bytes", fs::file_size(path)}, {"sha256", file_sha256(path)}};
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

}  // namespace tilevit::cli
