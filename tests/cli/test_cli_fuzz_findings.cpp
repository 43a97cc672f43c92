// Every input a fuzzer ever found a defect with (tests/fixtures/fuzz/), fed to every
// command that reads its type: each ends as one clean line on stderr, exit 3 (exit 1
// from `verify` when the package decodes but breaks a rule), quickly, never a crash,
// hang or internal error (70). A new finding is covered by dropping it into the folder.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_runner.hpp"

using namespace tilevit;
using test_support::run_tilevit;

namespace {

const std::string kFindings = std::string(TILEVIT_FIXTURES) + "/fuzz";

std::vector<std::string> finding_names() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(kFindings)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

// The commands that read a file of this name's type ({} stands for the file).
std::vector<std::string> commands_for(const std::string& name, const std::string& out_dir) {
  const std::string calibration = std::string(TILEVIT_FIXTURES) + "/calibration.json";
  const std::string small = "--preset small --machine test16 ";
  if (name.ends_with(".tvpkg"))
    return {"verify {}", "inspect {}", "memory-map {} --out " + out_dir + "/map",
            "run --package {} --inferences 1 --out " + out_dir + "/run", "reference --package {}"};
  if (name.ends_with(".machine")) return {"machine --machine {}", "cost-check --machine {} " + calibration};
  if (name.ends_with(".plan.json")) return {"compile " + small + "--plan {}"};
  if (name.ends_with(".json")) return {"cost-check {}"};  // calibration.json or kernels.json
  if (name.ends_with(".safetensors")) return {"compile " + small + "--weights {}", "reference --preset small --weights {}"};
  if (name.ends_with(".npy") || name.ends_with(".png") || name.ends_with(".jpg"))
    return {"reference --preset small --image {}"};
  if (name.ends_with(".tvprof"))
    return {"profile query {}", "profile render {} -o " + out_dir + "/p.html", "profile diff {} {}"};
  return {};
}

std::string with_file(std::string command, const std::string& path) {
  for (auto at = command.find("{}"); at != std::string::npos; at = command.find("{}", at + path.size()))
    command.replace(at, 2, path);
  return command;
}

class FuzzFinding : public test_support::CliTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(FuzzFinding, IsRejectedInOneLine) {
  const std::string path = kFindings + "/" + GetParam();
  const auto commands = commands_for(GetParam(), dir_.string());
  ASSERT_FALSE(commands.empty()) << "no command reads " << GetParam() << "; add its type to commands_for()";
  for (const std::string& command : commands) {
    const auto start = std::chrono::steady_clock::now();
    const auto r = run_tilevit(with_file(command, path));
    const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string shown = command + " -> exit " + std::to_string(r.exit_code) + ": " + r.err;
    EXPECT_LT(seconds, 5.0) << shown;
    if (command.starts_with("verify ") && r.exit_code == 1) {  // decoded, then rules broken: the report
      EXPECT_EQ(r.err, "") << shown;
      EXPECT_NE(r.out.find(": FAILED ("), std::string::npos) << shown << r.out;
      continue;
    }
    EXPECT_EQ(r.exit_code, 3) << shown;
    EXPECT_EQ(r.err_lines(), 1) << shown;
    EXPECT_EQ(r.err.rfind("tilevit: error: ", 0), 0u) << shown;
    EXPECT_NE(r.err.find(path), std::string::npos) << "the message names the file: " << shown;
  }
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  std::replace_if(name.begin(), name.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FuzzFinding, ::testing::ValuesIn(finding_names()), test_name);

}  // namespace
