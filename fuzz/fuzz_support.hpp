#pragma once
// Shared by the libFuzzer targets. A target feeds one input to one parser; a
// tilevit::Error is the clean rejection a user sees as one line and exit 3, so it is
// expected. Anything else escaping (a std::exception would be exit 70), a crash, a
// sanitizer report, a huge allocation or a hang is a finding.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "support/error.hpp"

namespace tilevit::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Parsers that take a path get the input through one file per process (in /dev/shm when
// it exists, so the fuzzer does not wear a disk), rewritten for every input.
inline std::string scratch_path(const std::string& extension) {
  static const std::filesystem::path dir =
      std::filesystem::exists("/dev/shm") ? std::filesystem::path("/dev/shm") : std::filesystem::temp_directory_path();
  return (dir / ("tilevit_fuzz_" + std::to_string(::getpid()) + extension)).string();
}

inline std::string input_file(const std::uint8_t* data, std::size_t size, const std::string& extension) {
  const std::string path = scratch_path(extension);
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                                 static_cast<std::streamsize>(size));
  return path;
}

// A property of a parsed input that does not hold: a finding.
[[noreturn]] inline void fail(const char* what) {
  std::fprintf(stderr, "tilevit fuzz: %s\n", what);
  std::abort();
}

// Runs `parse`; a tilevit::Error is a clean rejection, anything else aborts (a finding).
template <typename Parse>
void expect_clean(Parse&& parse) {
  try {
    parse();
  } catch (const Error&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tilevit fuzz: not a tilevit::Error (the CLI would exit 70): %s\n", e.what());
    std::abort();
  }
}

}  // namespace tilevit::fuzz
