#include "support/atomic_file.hpp"

#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>

#include "support/error.hpp"

namespace tilevit {
namespace fs = std::filesystem;

namespace {

// Temporaries being written, for the signal handler: fixed storage, since a handler may
// neither allocate nor lock. A write that finds no free slot is simply not tracked.
constexpr std::size_t kSlots = 16, kPathMax = 4096;
std::array<std::atomic<bool>, kSlots> slot_used{};
std::array<std::array<char, kPathMax>, kSlots> slot_path{};

extern "C" void remove_temporaries_and_die(int signal_number) {
  for (std::size_t i = 0; i < kSlots; ++i)
    if (slot_used[i].load()) ::unlink(slot_path[i].data());
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

void install_handlers_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int s : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old {};
      if (::sigaction(s, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) std::signal(s, remove_temporaries_and_die);
    }
  });
}

// Tracks a temporary for the lifetime of the object.
class TrackedTemporary {
 public:
  explicit TrackedTemporary(const std::string& path) {
    install_handlers_once();
    if (path.size() >= kPathMax) return;
    for (std::size_t i = 0; i < kSlots; ++i) {
      bool expected = false;
      if (!slot_used[i].compare_exchange_strong(expected, true)) continue;
      std::memcpy(slot_path[i].data(), path.c_str(), path.size() + 1);
      slot_ = static_cast<int>(i);
      return;
    }
  }
  ~TrackedTemporary() {
    if (slot_ >= 0) slot_used[std::size_t(slot_)].store(false);
  }
  TrackedTemporary(const TrackedTemporary&) = delete;
  TrackedTemporary& operator=(const TrackedTemporary&) = delete;

 private:
  int slot_ = -1;
};

bool process_gone(long pid) { return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }

void write_stream(const std::string& path, std::ostream& out, const std::function<void(std::ostream&)>& write) {
  write(out);
  out.flush();
  if (!out) throw Error(path + ": write failed (disk full?)", kExitResource);
}

}  // namespace

std::string resolve_output_path(const std::string& path) {
  fs::path p = path;
  std::error_code ec;
  for (int hops = 0; fs::is_symlink(fs::symlink_status(p, ec)); ++hops) {
    if (hops == 40) throw Error(path + ": too many levels of symbolic links", kExitResource);
    const fs::path target = fs::read_symlink(p, ec);
    if (ec) throw Error(path + ": cannot read symbolic link: " + ec.message(), kExitResource);
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  return p.string();
}

void sweep_stale_temporaries(const std::string& directory) {
  std::error_code ec;
  for (fs::directory_iterator it(directory.empty() ? "." : directory, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const auto at = name.rfind(".tmp.");
    if (at == std::string::npos || at + 5 == name.size()) continue;
    const std::string digits = name.substr(at + 5);
    if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code ignored;
    if (process_gone(std::stol(digits)) && it->is_regular_file(ignored)) fs::remove(it->path(), ignored);
  }
}

void check_output_writable(const std::string& path) {
  if (path == "-") return;
  if (path.empty()) throw Error("empty output path", kExitUsage);
  const fs::path target = resolve_output_path(path);
  std::error_code ec;
  const auto status = fs::status(target, ec);
  if (fs::is_directory(status)) throw Error(path + ": is a directory, expected a file", kExitResource);
  if (fs::exists(status)) {
    if (::access(target.c_str(), W_OK) != 0) throw Error(path + ": not writable", kExitResource);
    if (!fs::is_regular_file(status)) return;  // written in place
  }
  const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  if (!fs::is_directory(dir, ec)) throw Error(path + ": directory " + dir.string() + " does not exist", kExitResource);
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw Error(path + ": directory " + dir.string() + " is not writable", kExitResource);
}

void check_output_writable(const std::string& path, const std::string& created_dir) {
  const auto normal = [](const fs::path& p) {  // absolute, "." and ".." resolved, no trailing separator
    std::error_code ec;
    fs::path n = fs::weakly_canonical(fs::absolute(p, ec), ec);
    if (!n.has_filename()) n = n.parent_path();
    return ec ? fs::path() : n;
  };
  if (path != "-" && !path.empty() && !created_dir.empty()) {
    std::error_code ec;
    const fs::path dir = normal(fs::path(path)).parent_path();
    if (!dir.empty() && !fs::exists(dir, ec) && dir == normal(created_dir)) return;
  }
  check_output_writable(path);
}

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write) {
  if (path == "-") return write_stream("standard output", std::cout, write);
  const std::string target = resolve_output_path(path);
  std::error_code ec;
  const auto status = fs::status(target, ec);
  if (fs::is_directory(status)) throw Error(path + ": is a directory, expected a file", kExitResource);
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    // A device or FIFO: replacing it would destroy it (and never reach its reader).
    std::ofstream out(target, std::ios::binary);
    if (!out) throw Error(path + ": cannot open for writing", kExitResource);
    return write_stream(path, out, write);
  }
  sweep_stale_temporaries(fs::path(target).parent_path().string());
  const std::string tmp = target + ".tmp." + std::to_string(::getpid());
  const TrackedTemporary tracked(tmp);
  try {
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      if (!out) throw Error(path + ": cannot open for writing", kExitResource);
      write_stream(path, out, write);
    }
    fs::rename(tmp, target, ec);
    if (ec) throw Error(path + ": cannot rename temporary file into place: " + ec.message(), kExitResource);
  } catch (...) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw;
  }
}

void write_bytes_atomically(const std::string& path, std::span<const std::byte> bytes) {
  write_file_atomically(path, [&](std::ostream& out) {
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  });
}

void write_text_atomically(const std::string& path, const std::string& text) {
  write_file_atomically(path, [&](std::ostream& out) { out << text; });
}

std::string read_text_file(const std::string& path, std::size_t max_bytes) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) throw Error(path + ": cannot read: " + ec.message());
  if (size > max_bytes)
    throw Error(path + ": file is " + std::to_string(size) + " bytes, more than the limit of " +
                std::to_string(max_bytes));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace tilevit
