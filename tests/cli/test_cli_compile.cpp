// tilevit compile / verify / inspect as a user runs them.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

using namespace tilevit;
using test_support::last_line;
using test_support::run_tilevit;
namespace fs = std::filesystem;

namespace {
class CompileCli : public test_support::CliTest {
 protected:
  std::string small(const std::string& package) const {
    return "compile --preset small --machine " + machine_ + " --package " + package + " --json";
  }
  const std::string machine_ = std::string(TILEVIT_SOURCE_DIR) + "/src/target/machines/test16.machine";
};
}  // namespace

TEST_F(CompileCli, CompileVerifyInspect) {
  const auto r = run_tilevit(small(path("a.tvpkg")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"package_sha256", "compile_seconds", "peak_tile_bytes", "supersteps", "estimated_cycles"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["package_sha256"].get<std::string>().size(), 64u);
  const auto v = run_tilevit("verify " + path("a.tvpkg") + " --json");
  EXPECT_EQ(v.exit_code, 0) << v.out;
  EXPECT_TRUE(nlohmann::json::parse(v.out)["ok"].get<bool>());
  const auto i = run_tilevit("inspect " + path("a.tvpkg") + " --json");
  ASSERT_EQ(i.exit_code, 0) << i.err;
  const auto ij = nlohmann::json::parse(i.out);
  EXPECT_EQ(ij["package_sha256"], j["package_sha256"]);
  EXPECT_EQ(ij["estimated_cycles"], j["estimated_cycles"]);
  EXPECT_GT(ij["tiles_used"].get<int>(), 0);
}

TEST_F(CompileCli, RebuildGivesTheSameBytes) {
  ASSERT_EQ(run_tilevit(small(path("a.tvpkg")) + " --threads 1").exit_code, 0);
  ASSERT_EQ(run_tilevit(small(path("b.tvpkg")) + " --threads 2").exit_code, 0);
  std::ifstream a(path("a.tvpkg"), std::ios::binary), b(path("b.tvpkg"), std::ios::binary);
  const std::string x((std::istreambuf_iterator<char>(a)), {}), y((std::istreambuf_iterator<char>(b)), {});
  EXPECT_FALSE(x.empty());
  EXPECT_EQ(x, y);
}

TEST_F(CompileCli, InvalidMachineFileNamesTheField) {
  std::ifstream shipped(std::string(TILEVIT_SOURCE_DIR) + "/src/target/machines/c600.machine");
  std::string text((std::istreambuf_iterator<char>(shipped)), {});
  const auto at = text.find("tiles = 1472");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 12, "tiles = many");
  std::ofstream(path("bad.machine")) << text;
  const auto r = run_tilevit("compile --preset small --machine " + path("bad.machine"));
  EXPECT_EQ(r.exit_code, 3);
  const std::string line = last_line(r.err);
  EXPECT_NE(line.find("bad.machine"), std::string::npos) << line;
  EXPECT_NE(line.find("tiles"), std::string::npos) << line;
}

TEST_F(CompileCli, ModelTooBigForTheMachine) {
  const auto r = run_tilevit("compile --layers 1 --machine " + machine_);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(last_line(r.err).find("so400m-patch14-384 (1 layer, batch 1) does not fit test16: tile "), std::string::npos)
      << r.err;
  EXPECT_NE(last_line(r.err).find("nothing smaller to try"), std::string::npos) << r.err;
}

TEST_F(CompileCli, TruncatedOrCorruptedPackageIsRejected) {
  ASSERT_EQ(run_tilevit(small(path("a.tvpkg"))).exit_code, 0);
  const auto size = fs::file_size(path("a.tvpkg"));
  fs::copy_file(path("a.tvpkg"), path("cut.tvpkg"));
  fs::resize_file(path("cut.tvpkg"), size - 100);
  auto r = run_tilevit("verify " + path("cut.tvpkg"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(last_line(r.err).find("cut.tvpkg"), std::string::npos) << r.err;

  fs::copy_file(path("a.tvpkg"), path("flip.tvpkg"));
  {
    std::fstream f(path("flip.tvpkg"), std::ios::binary | std::ios::in | std::ios::out);
    f.seekg(static_cast<std::streamoff>(size / 2));
    char c;
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x10);
    f.seekp(static_cast<std::streamoff>(size / 2));
    f.write(&c, 1);
  }
  r = run_tilevit("inspect " + path("flip.tvpkg"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(last_line(r.err).find("corrupted"), std::string::npos) << r.err;
}

// compile and inspect report which share of the modelled kernel cycles is calibrated.
TEST_F(CompileCli, CompileAndInspectReportCalibrationCoverage) {
  const auto r = run_tilevit("compile --preset small --machine " + test_support::calibrated_test16(path(".")) + " --package " +
                             path("a.tvpkg") + " --json --kernels");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& c = j["kernel_calibration"];
  EXPECT_EQ(c["compute_cycles"], j["estimated_compute_cycles"]);
  const auto compute = c["compute_cycles"].get<std::uint64_t>(), uncalibrated = c["uncalibrated_cycles"].get<std::uint64_t>();
  EXPECT_EQ(c["calibrated_cycles"].get<std::uint64_t>() + uncalibrated, compute);
  EXPECT_DOUBLE_EQ(c["calibrated_share"].get<double>(), 1.0 - double(uncalibrated) / double(compute));
  EXPECT_GT(uncalibrated, 0u);  // the small model's attention combines key blocks: no measurement
  EXPECT_NE(std::find(c["uncalibrated_kinds"].begin(), c["uncalibrated_kinds"].end(), "attention_combine"),
            c["uncalibrated_kinds"].end());
  std::uint64_t kinds = 0;
  for (const auto& k : c["kinds"]) kinds += k["uncalibrated_cycles"].get<std::uint64_t>();
  EXPECT_GT(c["local_copy_cycles"].get<std::uint64_t>(), 0u);  // loopbacks copied in place: a quoted rule
  EXPECT_EQ(kinds + c["local_copy_cycles"].get<std::uint64_t>(), uncalibrated);
  // --kernels: the longest call per operation and kind.
  bool qkv = false;
  for (const auto& row : j["kernel_maxima"])
    if (row["operation"] == "layer.qkv" && row["kind"] == "gemm_fp8") {
      qkv = true;
      EXPECT_TRUE(row["in_loop"].get<bool>());
      EXPECT_EQ(row["matrix_cycles"], row["max_cycles"]);
      EXPECT_EQ(row["uncalibrated_cycles"], 0);
    }
  EXPECT_TRUE(qkv);

  const auto i = run_tilevit("inspect " + path("a.tvpkg") + " --json");
  ASSERT_EQ(i.exit_code, 0) << i.err;
  const auto ij = nlohmann::json::parse(i.out);
  EXPECT_EQ(ij["kernel_calibration"], c);
  EXPECT_EQ(ij["kernel_maxima"], j["kernel_maxima"]);

  // Text: one line with the share, the denominator and the uncalibrated kinds.
  const auto text = run_tilevit("inspect " + path("a.tvpkg"));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const auto compiled = run_tilevit("compile --preset small --machine " + machine_);
  for (const auto* out : {&text.out, &compiled.out}) {
    EXPECT_NE(out->find("kernel cycles: "), std::string::npos) << *out;
    EXPECT_NE(out->find("% calibrated of "), std::string::npos) << *out;
    EXPECT_NE(out->find("(uncalibrated: "), std::string::npos) << *out;
    EXPECT_NE(out->find("attention_combine "), std::string::npos) << *out;
  }
}

// --steps: each step's compute splits by kind (plus its local copies) and its exchange comes
// with its payload floors; the steps add up to the call's figures.
TEST_F(CompileCli, StepsSplitComputeByKindAndGiveExchangeFloors) {
  const auto r = run_tilevit(small(path("a.tvpkg")) + " --steps");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::uint64_t exchanging = 0, sync = 0;
  for (const auto& s : j["steps"]) {
    std::uint64_t kinds = 0;
    for (const auto& [kind, cycles] : s["kind_cycles"].items()) kinds += cycles.get<std::uint64_t>();
    EXPECT_EQ(kinds + s["local_copy_cycles"].get<std::uint64_t>(), s["compute_cycles"].get<std::uint64_t>()) << s;
    const auto floor = s["floor_cycles"].get<std::uint64_t>(), scheduled = s["exchange_cycles"].get<std::uint64_t>();
    EXPECT_GE(floor, s["receive_floor_cycles"].get<std::uint64_t>()) << s;
    EXPECT_GE(s["wave_floor_cycles"].get<std::uint64_t>(), floor) << s;  // waves in sequence
    EXPECT_GE(scheduled, s["wave_floor_cycles"].get<std::uint64_t>()) << s;  // one word per cycle is a floor
    EXPECT_GE(floor, s["send_floor_cycles"].get<std::uint64_t>()) << s;
    EXPECT_GE(scheduled, s["rule_bound_cycles"].get<std::uint64_t>()) << s;  // no schedule beats the rules
    EXPECT_GE(s["rule_bound_cycles"].get<std::uint64_t>(), s["wave_floor_cycles"].get<std::uint64_t>()) << s;
    if (s["transfers"].get<std::uint64_t>() > 0) {
      ++exchanging;
      EXPECT_GT(floor, 0u) << s;
      EXPECT_GE(s["waves"].get<std::uint64_t>(), 1u) << s;
    } else {
      EXPECT_EQ(floor, 0u) << s;
      EXPECT_EQ(s["sync_cycles"], 0) << s;
    }
    sync += s["sync_cycles"].get<std::uint64_t>();
  }
  EXPECT_GT(exchanging, 0u);
  EXPECT_GT(sync, 0u);
}

// Issue 31: every report says how far the whole-program model is from the original's
// measured builds (src/target/machines/model_validation.json, from bench/replicas.py).
TEST_F(CompileCli, ReportsCarryTheModelsValidationAgainstMeasuredBuilds) {
  const auto kept = nlohmann::json::parse(
      test_support::read_all(std::string(TILEVIT_SOURCE_DIR) + "/src/target/machines/model_validation.json"));
  const auto r = run_tilevit(small(path("a.tvpkg")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto v = nlohmann::json::parse(r.out).at("model_validation");
  EXPECT_EQ(v.at("builds"), kept.at("builds"));
  EXPECT_EQ(v.at("min_error_percent"), kept.at("min_error_percent"));
  EXPECT_EQ(v.at("max_error_percent"), kept.at("max_error_percent"));
  EXPECT_EQ(kept.at("replicas").size(), kept.at("builds").get<std::size_t>());
  const auto text = run_tilevit("compile --preset small --machine " + machine_);
  EXPECT_NE(text.out.find("model validation: " + std::to_string(kept.at("builds").get<int>()) + " measured builds"),
            std::string::npos)
      << text.out;
  const auto inspect = run_tilevit("inspect " + path("a.tvpkg"));
  EXPECT_NE(inspect.out.find("model validation: "), std::string::npos) << inspect.out;
}
