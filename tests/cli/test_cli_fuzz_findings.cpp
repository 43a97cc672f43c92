// Every input a fuzzer ever found a defect with (tests/fixtures/fuzz/), fed to every
// command that reads its type: each ends as one clean line on stderr, exit 3 (exit 1
// from `verify` when the package decodes but breaks a rule), quickly, never a crash,
// hang or internal error (70). A new finding is covered by dropping it into the folder.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
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
    return {"profile query {}", "profile render {} -o " + out_dir + "/p.html",
            "profile render {} --format trace -o " + out_dir + "/p.json", "profile diff {} {}",
            "profile compare {} {} -o " + out_dir + "/c.html"};
  return {};
}

std::string with_file(std::string command, const std::string& path) {
  for (auto at = command.find("{}"); at != std::string::npos; at = command.find("{}", at + path.size()))
    command.replace(at, 2, path);
  return command;
}

// The message of each package and profile reproducer's own site (the check its fix added).
const std::map<std::string, std::string> kSites = {
    {"pkg_float_int.tvpkg", "section \"model\": config.layers: expected an integer in [-2147483648, 2147483647], got 1e+300"},
    {"pkg_heads_overflow.tvpkg", "model config small: heads = 1073741824: heads x head_dim must equal width"},
    {"pkg_heads_wrap.tvpkg", "model config small: heads = 536870914: heads x head_dim must equal width"},
    {"pkg_machine_divzero.tvpkg", "[region standard] element_bytes: value 0x80000000 is out of range [1, 65536]"},
    {"pkg_huge_wave.tvpkg", "superstep 0 declares 4294967295 exchange waves, its transfers use 1"},
    {"pkg_kernel_tile.tvpkg", "superstep 0: kernel on tile 1000"},
    {"min_package_P1_kernel_tile.tvpkg", ": kernel on tile 16"},
    {"pkg_xfer_tile.tvpkg", "superstep 0: transfer with an invalid source tile"},
    {"min_package_P1_src_tile.tvpkg", "superstep 0: transfer with an invalid source tile"},
    {"min_package_P1_dst_tile.tvpkg", "superstep 0: transfer to tile 16"},
    {"pkg_gemm_dims.tvpkg", "gemm_fp8 dim rows = 4294967295 is outside 1..638976"},
    {"min_package_P2_cast.tvpkg", "cast_fp8 FP8 scale 2147483640 is outside [-31, 31]"},
    {"pkg_overlap_16000.tvpkg", "\"image.patches\" and \"image.patches\" overlap in address while both live"},
    {"prof_float_u32.tvprof", "machine.flop_per_cycle_fp8: expected an integer in [0, 4294967295], got 1e+300"},
    {"min_profile_U1.tvprof", "iterations_in_detail: expected an integer in [0, 4294967295], got 1.9223372036854776e+19"},
    {"prof_label_utf8.tvprof", "section \"meta\": a label is not printable UTF-8"},
};

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

// Issue 34, item 20: every command stops at a rebuilt reproducer's own site.
class RebuiltFinding : public FuzzFinding {};

TEST_P(RebuiltFinding, ReachesItsOwnSite) {
  const auto site = kSites.find(GetParam());
  ASSERT_NE(site, kSites.end()) << GetParam() << ": add its site's message to kSites";
  const std::string path = kFindings + "/" + GetParam();
  for (const std::string& command : commands_for(GetParam(), dir_.string())) {
    const auto r = run_tilevit(with_file(command, path));
    EXPECT_NE((r.out + r.err).find(site->second), std::string::npos) << command << " -> " << r.err << r.out.substr(0, 400);
  }
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  std::replace_if(name.begin(), name.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FuzzFinding, ::testing::ValuesIn(finding_names()), test_name);

std::vector<std::string> container_names() {
  std::vector<std::string> names = finding_names();
  std::erase_if(names, [](const std::string& n) { return !n.ends_with(".tvpkg") && !n.ends_with(".tvprof"); });
  return names;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, RebuiltFinding, ::testing::ValuesIn(container_names()), test_name);

}  // namespace
