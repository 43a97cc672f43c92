// `tilevit cost-check` and `tilevit machine` end to end: output shape and exit codes.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "target/machine.hpp"

namespace tilevit::target {
namespace {

struct CliRun {
  int exit_code = -1;
  std::string out;
};

// Runs the tilevit binary with `args` (shell words), capturing stdout; stderr discarded.
CliRun tilevit(const std::string& args) {
  CliRun run;
  const std::string command = std::string(TILEVIT_BINARY) + " " + args + " 2>/dev/null";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return run;
  std::array<char, 4096> buffer{};
  while (std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) run.out.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

class TargetCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(TILEVIT_BINARY)) GTEST_SKIP() << "tilevit not built: " << TILEVIT_BINARY;
    dir_ = std::filesystem::temp_directory_path() / ("tilevit_test_target_cli_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::string write(const std::string& name, const std::string& text) {
    const auto path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  std::filesystem::path dir_;
  const std::string calibration_ = std::string(TILEVIT_FIXTURES) + "/calibration.json";
};

TEST_F(TargetCli, CostCheckTable) {
  const CliRun run = tilevit("cost-check " + calibration_);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("kernel"), std::string::npos);
  EXPECT_NE(run.out.find("fp16 184x288x48"), std::string::npos) << run.out;
  const auto last = run.out.substr(run.out.rfind("median"));
  EXPECT_EQ(last.rfind("median abs error ", 0), 0u) << last;
  EXPECT_NE(last.find("% over 20 measurements\n"), std::string::npos) << last;
}

TEST_F(TargetCli, CostCheckJson) {
  const CliRun run = tilevit("cost-check " + calibration_ + " --json");
  ASSERT_EQ(run.exit_code, 0);
  const auto j = nlohmann::json::parse(run.out);
  ASSERT_EQ(j["entries"].size(), 20u);
  EXPECT_EQ(j["entries"][0]["kernel"], "gemm");
  EXPECT_EQ(j["entries"][0]["dims"]["rows"], 184);
  EXPECT_EQ(j["entries"][0]["measured"], 48654);
  // The older 20-point file is read and compared, not fitted: its points are of older
  // kernel generations than the C600's 2026-09-11 coefficients (docs/COST_MODEL.md).
  EXPECT_GE(j["max_abs_error"].get<double>(), j["median_abs_error"].get<double>());
}

TEST_F(TargetCli, CostCheckBadInputExitsThree) {
  EXPECT_EQ(tilevit("cost-check " + write("bad.json", R"({"measurements": [{"kernel": "conv", "cycles": 1}]})")).exit_code,
            3);
  EXPECT_EQ(tilevit("cost-check " + (dir_ / "absent.json").string()).exit_code, 3);
  EXPECT_EQ(tilevit("cost-check " + calibration_ + " --machine " + write("bad.machine", "tilevit-machine 9\n")).exit_code, 3);
  EXPECT_EQ(tilevit("cost-check").exit_code, 2);  // usage
}

TEST_F(TargetCli, CostCheckUsesTheGivenMachine) {
  // Doubling the FP16 GEMM per-panel coefficient must show up in the predictions.
  std::string text(c600_text());
  const std::string panel = "gemm_fp16_per_panel = 179.402";
  text.replace(text.find(panel), panel.size(), "gemm_fp16_per_panel = 358.804");
  const CliRun run = tilevit("cost-check " + calibration_ + " --json --machine " + write("slow.machine", text));
  ASSERT_EQ(run.exit_code, 0);
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_GT(j["entries"][0]["predicted"].get<double>(), 1.1 * 48654);
}

TEST_F(TargetCli, MachineTextParsesBack) {
  const CliRun run = tilevit("machine");
  ASSERT_EQ(run.exit_code, 0);
  EXPECT_EQ(parse_machine(run.out, "stdout"), c600());  // derived lines are comments
  EXPECT_NE(run.out.find("FP16 282.6"), std::string::npos) << run.out;
}

TEST_F(TargetCli, MachineJson) {
  const CliRun run = tilevit("machine --json --machine " + write("t.machine", std::string(test16_text())));
  ASSERT_EQ(run.exit_code, 0);
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["tiles"], 16);
  EXPECT_EQ(j["derived"]["total_sram_bytes"], 16 * 638'976);
  EXPECT_GT(j["derived"]["peak_flops_fp16"].get<double>(), 0);
}

// kernels.json: per-kind points and errors, the not-modelled list, and --fit printing the
// embedded machine's [costs] (docs/COST_MODEL.md).
class KernelsJsonCli : public TargetCli {
 protected:
  const std::string kernels_ = std::string(TILEVIT_FIXTURES) + "/kernels.json";
};

TEST_F(KernelsJsonCli, CostCheckPerKind) {
  const CliRun run = tilevit("cost-check " + kernels_);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("kernel generation 2026-09-11"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("softmax_split  |      3 |"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("Not modelled ("), std::string::npos);
  const auto j = nlohmann::json::parse(tilevit("cost-check " + kernels_ + " --json --machine c600-2026-09-13").out);
  EXPECT_EQ(j["generation"], "2026-09-13");
  EXPECT_EQ(j["kinds"].size(), 13u);  // 12 formulas and the softmax in either mode
  EXPECT_GT(j["not_modelled"].size(), 50u);
  EXPECT_FALSE(j["not_modelled"][0]["reason"].get<std::string>().empty());
}

TEST_F(KernelsJsonCli, FitPrintsTheEmbeddedCosts) {
  const CliRun run = tilevit("cost-check " + kernels_ + " --fit --generation 2026-09-11");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const std::string c600(c600_text());
  EXPECT_NE(c600.find(run.out), std::string::npos) << "c600.machine's [costs] is the printed fit:\n" << run.out;
  const auto j = nlohmann::json::parse(tilevit("cost-check " + kernels_ + " --fit --json --machine c600-2026-09-13").out);
  EXPECT_EQ(j["generation"], "2026-09-13");
  EXPECT_EQ(tilevit("cost-check " + kernels_ + " --generation 2026-09-11").exit_code, 2);  // needs --fit
  EXPECT_EQ(tilevit("cost-check " + kernels_ + " --fit --generation soon").exit_code, 2);
  EXPECT_EQ(tilevit("cost-check " + calibration_ + " --fit --generation 2026-09-11").exit_code, 3);  // old format
}

}  // namespace
}  // namespace tilevit::target
