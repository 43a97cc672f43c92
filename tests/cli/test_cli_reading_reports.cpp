// Issue #34, items 11, 12, 16, 17 and 18: messages and reports that said the wrong thing,
// ran values together, cut names, or mixed outputs. One test per behaviour, through the
// binary, on the small model and the 16-tile machine (each run about a second).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "cli_runner.hpp"

namespace fs = std::filesystem;
using tilevit::test_support::expect_error_line;
using tilevit::test_support::run_tilevit;

namespace {
class ReadingReportsCli : public tilevit::test_support::CliTest {
 protected:
  std::string small() const { return "--preset small --machine " + machine_; }
  // A package of the small model (FP8 scale -4, the default), compiled once per test.
  std::string package() {
    const std::string p = path("p.tvpkg");
    if (!fs::exists(p)) EXPECT_EQ(run_tilevit("compile " + small() + " --profile --package " + p).exit_code, 0);
    return p;
  }
  // The profile of one run of the small model (kernel granularity: a sample per kernel;
  // phase: one per tile and step, naming the operations fused in it).
  std::string profile(const std::string& name, const std::string& flags = "--profile-granularity kernel") {
    const std::string out = path(name);
    const auto r = run_tilevit("run " + small() + " --inferences 1 --no-reference --out " + out + " " + flags);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return out + "/profile.tvprof";
  }
  const std::string machine_ = std::string(TILEVIT_SOURCE_DIR) + "/src/target/machines/test16.machine";
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}
}  // namespace

// 11. A scale that differs from the package's: both flags and values, once each, one line.
TEST_F(ReadingReportsCli, ScaleMismatchNamesBothScalesInFlagForm) {
  const std::string p = package();
  const std::string line = expect_error_line("reference --package " + p + " --fp8-scale -3", 2,
                                        {"built with --fp8-scale -4, --fp8-scale -3 asked", "--fp8-scale"});
  EXPECT_LT(line.size(), 260u) << line;  // not every role's scale run together
  EXPECT_EQ(line.find("embedding="), std::string::npos) << line;
}

// 11. --calibrated-scales against a package built with --fp8-scale -4 says so.
TEST_F(ReadingReportsCli, CalibratedScalesMismatchSaysWhatThePackageWasBuiltWith) {
  const std::string p = package();
  const std::string line = expect_error_line("run --package " + p + " --calibrated-scales --out " + path("o"), 2,
                                        {"built with --fp8-scale -4, --calibrated-scales asked"});
  EXPECT_EQ(line.find("built with --calibrated-scales"), std::string::npos) << line;
}

// 11. The package's own scale is no mismatch (the roles a package does not record were compared).
TEST_F(ReadingReportsCli, ThePackagesOwnFp8ScaleIsAccepted) {
  const std::string p = path("p3.tvpkg");
  ASSERT_EQ(run_tilevit("compile " + small() + " --fp8-scale -3 --package " + p).exit_code, 0);
  const auto r = run_tilevit("reference --package " + p + " --fp8-scale -3 --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// 12. A one-chip package on a machine of several chips: the flag and the chips, not a section.
TEST_F(ReadingReportsCli, OneChipPackageOnSeveralChipsNamesTheMachineFlag) {
  const std::string p = package();
  const std::string line = expect_error_line("run --package " + p + " --machine c600x2 --out " + path("o"), 2,
                                        {p, "one-chip package", "--machine c600x2", "2 chips"});
  EXPECT_EQ(line.find("missing required section"), std::string::npos) << line;
}

// 12. A profile where a package is expected says what it is, as the reverse case does.
TEST_F(ReadingReportsCli, ProfileGivenAsAPackageSaysItIsAProfile) {
  const std::string prof = profile("run");
  for (const std::string& command : std::vector<std::string>{"inspect ", "verify ", "memory-map --out " + path("m") + " ",
                                                         "run --out " + path("o") + " --package "}) {
    const std::string line = expect_error_line(command + prof, 3, {prof, "is a profile, not a package"});
    EXPECT_EQ(line.find("missing required section"), std::string::npos) << line;
  }
  expect_error_line("profile query " + package(), 3, {"is a package, not a profile"});
}
