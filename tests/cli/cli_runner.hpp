#pragma once
// Runs the tilevit binary as a user would and captures exit code, stdout and stderr.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace tilevit::test_support {

struct CliResult {
  int exit_code = -1;
  std::string out, err;
  int err_lines() const {
    int n = 0;
    for (char c : err) n += c == '\n';
    return n;
  }
};

inline std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// `args` are shell words; stderr goes to a temporary file so progress lines can be
// separated from the error line (the last line).
inline CliResult run_tilevit(const std::string& args) {
  static int counter = 0;
  const std::string err_path = std::filesystem::temp_directory_path() /
                               ("tilevit_cli_err_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  CliResult r;
  FILE* pipe = ::popen((std::string(TILEVIT_BINARY) + " " + args + " 2>" + err_path).c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buffer{};
  while (std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) r.out.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = read_all(err_path);
  std::filesystem::remove(err_path);
  return r;
}

// test16.machine names no kernel generation, so every kernel on it counts as
// uncalibrated; this copy, written into `dir`, names the C600's (2026-09-11), so the
// kinds with measurements of that generation count as calibrated.
inline std::string calibrated_test16(const std::string& dir) {
  std::string text = read_all(std::string(TILEVIT_SOURCE_DIR) + "/src/target/machines/test16.machine");
  const auto at = text.find("[costs]\n");
  if (at == std::string::npos) return {};
  text.insert(at + 8, "generation = 2026-09-11\n");
  const std::string path = dir + "/test16-2026-09-11.machine";
  std::ofstream(path) << text;
  return path;
}

// The last line of stderr: the error message, after any progress lines.
inline std::string last_line(const std::string& text) {
  std::string t = text;
  while (!t.empty() && t.back() == '\n') t.pop_back();
  const auto p = t.rfind('\n');
  return p == std::string::npos ? t : t.substr(p + 1);
}

// Runs `args`, expects exit `code` and a last stderr line "tilevit: error: ..." holding
// every needle; returns that line.
inline std::string expect_error_line(const std::string& args, int code, std::initializer_list<std::string> needles) {
  const CliResult r = run_tilevit(args);
  EXPECT_EQ(r.exit_code, code) << args << "\n" << r.err;
  const std::string line = last_line(r.err);
  EXPECT_EQ(line.rfind("tilevit: error: ", 0), 0u) << args << ": " << line;
  for (const auto& n : needles) EXPECT_NE(line.find(n), std::string::npos) << "missing '" << n << "' in: " << line;
  return line;
}

// A fresh temporary directory for each test's files, removed after it.
class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tilevit_cli_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

}  // namespace tilevit::test_support
