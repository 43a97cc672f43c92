// inspect, memory-map and verify on a pipeline package (several chips): --stage N shows
// stage N and says so; without it verify checks every stage and the others ask for one;
// --stage on a one-chip package or out of range is one line, exit 2; a corrupt stage is
// named. reference --package takes a pipeline's whole numerics.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "support/atomic_file.hpp"
#include "system/pipeline_package.hpp"

using namespace tilevit;
using test_support::CliResult;
using test_support::run_tilevit;

namespace {

class StageViews : public ::testing::Test {
 protected:
  static std::filesystem::path dir() {
    return std::filesystem::temp_directory_path() / ("tilevit_stage_views_" + std::to_string(::getpid()));
  }
  static std::string pipeline() { return (dir() / "p.tvpkg").string(); }
  static std::string one_chip() { return (dir() / "one.tvpkg").string(); }

  static void SetUpTestSuite() {
    std::filesystem::create_directories(dir());
    const CliResult p = run_tilevit("compile --preset siglip2-tiny --machine test16x2 --batch 1 --package " + pipeline());
    ASSERT_EQ(p.exit_code, 0) << p.err;
    const CliResult one = run_tilevit("compile --preset small --machine test16 --package " + one_chip());
    ASSERT_EQ(one.exit_code, 0) << one.err;
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir()); }

  static void expect_usage_error(const std::string& command, const std::string& expected) {
    const CliResult r = run_tilevit(command);
    EXPECT_EQ(r.exit_code, 2) << command << "\n" << r.err;
    EXPECT_EQ(r.err_lines(), 1) << command << "\n" << r.err;
    EXPECT_NE(r.err.find(expected), std::string::npos) << command << "\n" << r.err;
  }
};

TEST_F(StageViews, InspectShowsTheStageAskedAndNamesIt) {
  std::uint32_t next_layer = 0;
  for (std::uint32_t s = 0; s < 2; ++s) {
    const std::string stage = " --stage " + std::to_string(s);
    const CliResult r = run_tilevit("inspect " + pipeline() + stage + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["stage"], s);
    EXPECT_EQ(j["stages"], 2);
    EXPECT_EQ(j["stage_layers"]["first"], next_layer);
    EXPECT_NE(j["stage_sha256"], j["package_sha256"]);
    next_layer += j["stage_layers"]["count"].get<std::uint32_t>();
    const CliResult text = run_tilevit("inspect " + pipeline() + stage);
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find(pipeline() + ", stage " + std::to_string(s) + " of 2 (layers "), std::string::npos) << text.out;
  }
  EXPECT_EQ(next_layer, 4u);  // siglip2-tiny's layers, cut in order
  const auto one = nlohmann::json::parse(run_tilevit("inspect --json " + one_chip()).out);
  EXPECT_FALSE(one.contains("stage"));  // a one-chip package's JSON keeps its form
}

TEST_F(StageViews, MemoryMapOfAStageSaysWhichInItsJsonAndTitles) {
  for (std::uint32_t s = 0; s < 2; ++s) {
    const std::string out = (dir() / ("map" + std::to_string(s))).string();
    const CliResult r = run_tilevit("memory-map " + pipeline() + " --stage " + std::to_string(s) + " --json --out " + out);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["stage"], s);
    const auto map = nlohmann::json::parse(test_support::read_all(out + "/memory.json"));
    EXPECT_EQ(map["stage"], s);
    EXPECT_EQ(map["stages"], 2);
    const std::string subject = "\"subject\":\"test16, stage " + std::to_string(s) + " of 2\"";
    EXPECT_NE(test_support::read_all(out + "/memory.html").find(subject), std::string::npos);
  }
  const std::string a = test_support::read_all((dir() / "map0/memory.png").string());
  EXPECT_NE(a, test_support::read_all((dir() / "map1/memory.png").string()));
}

TEST_F(StageViews, VerifyChecksEveryStageOrTheOneNamed) {
  const CliResult all = run_tilevit("verify " + pipeline());
  ASSERT_EQ(all.exit_code, 0) << all.out << all.err;
  EXPECT_NE(all.out.find(pipeline() + ", stage 0 of 2: OK"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find(pipeline() + ", stage 1 of 2: OK"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find(pipeline() + ": OK (pipeline package of 2 stages; system section checked)"), std::string::npos);
  const auto j = nlohmann::json::parse(run_tilevit("verify --json " + pipeline()).out);
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["system_checked"], true);
  ASSERT_EQ(j["stage_reports"].size(), 2u);
  EXPECT_EQ(j["stage_reports"][1]["stage"], 1);
  EXPECT_GT(j["stage_reports"][1]["allocations"].get<std::uint64_t>(), 0u);

  const CliResult one = run_tilevit("verify --json --stage 1 " + pipeline());
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const auto k = nlohmann::json::parse(one.out);
  EXPECT_EQ(k["stage"], 1);
  EXPECT_EQ(k["stage_sha256"], j["stage_reports"][1]["stage_sha256"]);
  EXPECT_EQ(k["allocations"], j["stage_reports"][1]["allocations"]);
}

TEST_F(StageViews, StageFlagMisusesAreOneLineUsageErrors) {
  const std::string give = pipeline() + ": pipeline package of 2 stages: give --stage 0..1";
  expect_usage_error("inspect " + pipeline(), give);
  expect_usage_error("memory-map " + pipeline() + " --out " + (dir() / "m").string(), give);
  for (const std::string command : {"inspect", "verify"}) {
    expect_usage_error(command + " " + pipeline() + " --stage 2", pipeline() + ": --stage 2 out of range: ");
    expect_usage_error(command + " " + one_chip() + " --stage 0", one_chip() + ": --stage 0 given, but this is a one-chip");
    expect_usage_error(command + " " + pipeline() + " --stage -1", "--stage");
  }
  expect_usage_error("reference --package " + pipeline() + " --stage 0", "--stage");  // the whole model only
}

TEST_F(StageViews, ACorruptStageIsNamed) {
  system::LoadedPipeline loaded = system::load_pipeline(pipeline());
  loaded.pipeline.stages[1].executable.program.allocations.front().address = 0xfffffff0u;  // outside SRAM
  const std::string bad = (dir() / "bad.tvpkg").string();
  write_bytes_atomically(bad, system::encode_pipeline(loaded.pipeline).bytes());

  const CliResult all = run_tilevit("verify " + bad);
  EXPECT_EQ(all.exit_code, 1) << all.err;
  EXPECT_NE(all.out.find("violation: stage 1: "), std::string::npos) << all.out;
  EXPECT_NE(all.out.find(bad + ", stage 0 of 2: OK"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find(bad + ", stage 1 of 2: FAILED"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("system section not checked"), std::string::npos) << all.out;
  EXPECT_EQ(run_tilevit("verify " + bad + " --stage 0").exit_code, 0);
  EXPECT_EQ(run_tilevit("verify " + bad + " --stage 1").exit_code, 1);
  for (const std::string& command : {std::string("inspect"), "memory-map --out " + (dir() / "bad-map").string()}) {
    const CliResult r = run_tilevit(command + " " + bad + " --stage 1");
    EXPECT_EQ(r.exit_code, 3) << command;
    EXPECT_NE(test_support::last_line(r.err).find(bad + ": stage.1: not a valid package: "), std::string::npos) << r.err;
    EXPECT_EQ(run_tilevit(command + " " + bad + " --stage 0").exit_code, 0) << command;
  }
}

TEST_F(StageViews, ReferenceTakesAPipelinesWholeNumerics) {
  const CliResult r = run_tilevit("reference --package " + pipeline() + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["package"], pipeline());
  EXPECT_EQ(j["layers"], 4);
}

}  // namespace
