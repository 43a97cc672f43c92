// compile --optimization-steps as a user runs it on the small model and test16: the report
// in --json and in its file, the written plan rebuilding the same package, the same package
// at 1 and 2 threads, 0 steps leaving the package unchanged, and bad input.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

using namespace tilevit;
using test_support::last_line;
using test_support::run_tilevit;

namespace {
class SearchCli : public test_support::CliTest {
 protected:
  std::string compile(const std::string& extra) const {
    return "compile --preset small --machine " + machine_ + " --json " + extra;
  }
  const std::string machine_ = std::string(TILEVIT_SOURCE_DIR) + "/src/target/machines/test16.machine";
};
nlohmann::json json_of(const test_support::CliResult& r) { return nlohmann::json::parse(r.out); }
}  // namespace

TEST_F(SearchCli, TheReportNamesItsChangesAndTheWrittenPlanRebuildsThePackage) {
  const auto searched = run_tilevit(compile("--optimization-steps 8 --optimization-report " + path("r.json") +
                                            " --write-plan " + path("plan.json")));
  ASSERT_EQ(searched.exit_code, 0) << searched.err;
  const auto out = json_of(searched);
  const auto& report = out.at("optimization");
  EXPECT_EQ(report, nlohmann::json::parse(test_support::read_all(path("r.json"))));
  EXPECT_EQ(report.at("candidates_compiled"), 8);
  EXPECT_EQ(report.at("result").at("estimated_cycles"), out.at("estimated_cycles"));
  EXPECT_LE(report.at("result").at("estimated_cycles"), report.at("baseline").at("estimated_cycles"));
  for (const char* field : {"accepted", "rejected", "stopped", "lower_bound", "cut_by_time", "search_seconds"})
    EXPECT_TRUE(report.contains(field)) << field;
  EXPECT_FALSE(report.at("accepted").empty());
  EXPECT_TRUE(report.at("accepted")[0].contains("sram_headroom_bytes"));
  EXPECT_NE(searched.err.find("search: candidate 8/8"), std::string::npos) << searched.err;

  const auto again = run_tilevit(compile("--plan " + path("plan.json")));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(json_of(again).at("package_sha256"), out.at("package_sha256"));
  EXPECT_FALSE(json_of(again).contains("optimization"));
}

TEST_F(SearchCli, TheSamePackageAtOneAndTwoThreadsAndZeroStepsChangesNothing) {
  const auto one = run_tilevit(compile("--optimization-steps 8 --threads 1"));
  const auto two = run_tilevit(compile("--optimization-steps 8 --threads 2"));
  ASSERT_EQ(one.exit_code, 0) << one.err;
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_EQ(json_of(one).at("package_sha256"), json_of(two).at("package_sha256"));

  // The default is 8 steps; 0 is the heuristic plan, a different package here.
  const auto plain = run_tilevit(compile(""));
  const auto zero = run_tilevit(compile("--optimization-steps 0"));
  EXPECT_EQ(json_of(one).at("package_sha256"), json_of(plain).at("package_sha256"));
  EXPECT_EQ(json_of(plain).at("optimization").at("steps"), 8);
  EXPECT_FALSE(json_of(zero).contains("optimization"));
  EXPECT_NE(json_of(one).at("package_sha256"), json_of(zero).at("package_sha256"));
}

TEST_F(SearchCli, BadStepsAndPlansAreOneLineErrors) {
  for (const char* steps : {"-1", "abc", "1.5"}) {
    const auto r = run_tilevit(compile(std::string("--optimization-steps ") + steps));
    EXPECT_EQ(r.exit_code, 2) << steps;
    EXPECT_NE(r.err.find("--optimization-steps"), std::string::npos) << r.err;
  }
  EXPECT_EQ(run_tilevit(compile("--search-seconds -3")).exit_code, 2);

  // A plan with every GEMM on one tile: its weights do not fit tile 0.
  ASSERT_EQ(run_tilevit(compile("--write-plan " + path("plan.json"))).exit_code, 0);
  auto plan = nlohmann::json::parse(test_support::read_all(path("plan.json")));
  for (auto& [op, grid] : plan.at("gemm").items()) grid = {{"r", 1}, {"k", 1}, {"c", 1}};
  std::ofstream(path("huge.json")) << plan.dump(1);
  const auto huge = run_tilevit(compile("--plan " + path("huge.json") + " --optimization-steps 2"));
  EXPECT_EQ(huge.exit_code, 3);
  EXPECT_NE(last_line(huge.err).find("huge.json: the model does not fit with this plan: tile "), std::string::npos)
      << huge.err;
  EXPECT_NE(last_line(huge.err).find(" needs "), std::string::npos) << huge.err;

  const auto contradicted = run_tilevit(compile("--plan " + path("plan.json") + " --exchange-stream-words 512"));
  EXPECT_EQ(contradicted.exit_code, 2);
  EXPECT_NE(last_line(contradicted.err).find("contradicts"), std::string::npos) << contradicted.err;

  const auto package = run_tilevit("run --package " + path("x.tvpkg") + " --optimization-steps 4");
  EXPECT_EQ(package.exit_code, 2);
  EXPECT_NE(last_line(package.err).find("with --package"), std::string::npos) << package.err;
}

// FP8 attention pinned in a plan file: compiled, exported again by --write-plan, rebuilt
// to the same package; pinned for the MAP head's pooling: a one-line usage error.
TEST_F(SearchCli, AnFP8AttentionPlanRoundTripsAndTheMapPoolingIsRefused) {
  ASSERT_EQ(run_tilevit(compile("--write-plan " + path("plan.json"))).exit_code, 0);
  auto plan = nlohmann::json::parse(test_support::read_all(path("plan.json")));
  plan["fp8_attention"] = {"layer.attention"};
  std::ofstream(path("fp8.json")) << plan.dump(1);
  const auto first = run_tilevit(compile("--plan " + path("fp8.json") + " --write-plan " + path("again.json")));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(nlohmann::json::parse(test_support::read_all(path("again.json"))).at("fp8_attention"), plan["fp8_attention"]);
  const auto second = run_tilevit(compile("--plan " + path("again.json")));
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(json_of(second).at("package_sha256"), json_of(first).at("package_sha256"));
  EXPECT_NE(json_of(first).at("package_sha256"), json_of(run_tilevit(compile("--plan " + path("plan.json")))).at("package_sha256"));

  plan["fp8_attention"] = {"head.attention"};
  std::ofstream(path("map.json")) << plan.dump(1);
  const auto map = run_tilevit(compile("--plan " + path("map.json")));
  EXPECT_EQ(map.exit_code, 2);
  EXPECT_NE(last_line(map.err).find("fp8_attention for head.attention"), std::string::npos) << map.err;
}

TEST_F(SearchCli, ASearchThatFindsNothingBetterSaysSoAndKeepsTheBaseline) {
  // Cut before the first candidate: the baseline is the answer, and the report says why.
  const auto cut = run_tilevit(compile("--optimization-steps 8 --search-seconds 0.000001"));
  ASSERT_EQ(cut.exit_code, 0) << cut.err;
  const auto out = json_of(cut);
  const auto& report = out.at("optimization");
  EXPECT_EQ(report.at("found_better"), false);
  EXPECT_EQ(report.at("cut_by_time"), true);
  EXPECT_NE(report.at("note").get<std::string>().find("baseline is kept"), std::string::npos);
  EXPECT_EQ(out.at("package_sha256"), json_of(run_tilevit(compile("--optimization-steps 0"))).at("package_sha256"));
}
