#include "support/atomic_file.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/error.hpp"

namespace tilevit {

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  try {
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      if (!out) throw Error(path + ": cannot open for writing", kExitResource);
      write(out);
      out.flush();
      if (!out) throw Error(path + ": write failed (disk full?)", kExitResource);
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) throw Error(path + ": cannot rename temporary file into place: " + ec.message(), kExitResource);
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
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
  const auto size = std::filesystem::file_size(path, ec);
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
