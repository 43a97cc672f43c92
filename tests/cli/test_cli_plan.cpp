// compile --write-plan / --plan and run --plan as a user runs them.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

using namespace tilevit;
using test_support::last_line;
using test_support::run_tilevit;

namespace {
class PlanCli : public test_support::CliTest {
 protected:
  std::string compile(const std::string& extra) const {
    return "compile --preset small --machine " + machine_ + " --json " + extra;
  }
  const std::string machine_ = std::string(TILEVIT_SOURCE_DIR) + "/src/target/machines/test16.machine";
};
std::string sha_of(const test_support::CliResult& r) { return nlohmann::json::parse(r.out).at("package_sha256"); }
}  // namespace

TEST_F(PlanCli, AWrittenPlanRebuildsTheSamePackageAndAnEditedOneChangesIt) {
  const auto first = run_tilevit(compile("--write-plan " + path("plan.json")));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const auto again = run_tilevit(compile("--plan " + path("plan.json")));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(sha_of(again), sha_of(first));

  auto plan = nlohmann::json::parse(test_support::read_all(path("plan.json")));
  plan["gemm"]["layer.mlp.fc2"] = {{"r", 1}, {"k", 9}, {"c", 1}};  // one panel per K block
  std::ofstream(path("edited.json")) << plan.dump(1);
  const auto edited = run_tilevit(compile("--plan " + path("edited.json") + " --package " + path("e.tvpkg")));
  ASSERT_EQ(edited.exit_code, 0) << edited.err;
  EXPECT_NE(sha_of(edited), sha_of(first));
  EXPECT_EQ(run_tilevit("verify " + path("e.tvpkg")).exit_code, 0);
}

TEST_F(PlanCli, BadPlansAreOneLineErrors) {
  std::ofstream(path("bad.json")) << R"({"tilevit_plan": 1})";
  const auto bad = run_tilevit(compile("--plan " + path("bad.json")));
  EXPECT_EQ(bad.exit_code, 3);
  EXPECT_NE(last_line(bad.err).find("bad.json"), std::string::npos) << bad.err;

  ASSERT_EQ(run_tilevit(compile("--write-plan " + path("plan.json"))).exit_code, 0);
  const auto other = run_tilevit("compile --preset small --batch 2 --machine " + machine_ + " --plan " + path("plan.json"));
  EXPECT_EQ(other.exit_code, 3);
  EXPECT_NE(last_line(other.err).find("a plan for small batch 1"), std::string::npos) << other.err;

  const auto both = run_tilevit("run --package " + path("x.tvpkg") + " --plan " + path("plan.json"));
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(last_line(both.err).find("--plan with --package"), std::string::npos) << both.err;
}

// The seed plans (bench/plans/) pin the original's shard shapes on the main job: the
// longest call of each kernel of a layer has the original's shape (rows 243 and 81 where
// it padded 729 tokens to 244 and 82; head dim 72 where it padded to 80).
TEST_F(PlanCli, SeedPlansGiveTheOriginalsShardShapes) {
  const std::string plans = std::string(TILEVIT_SOURCE_DIR) + "/bench/plans/";
  auto shapes_of = [&](const std::string& plan) {
    const auto r = run_tilevit("compile --kernels --json --plan " + plans + plan);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::map<std::string, std::string> shapes;  // "operation kind" -> shape of the longest call
    const auto j = nlohmann::json::parse(r.out);
    for (const auto& row : j["kernel_maxima"])
      if (row["in_loop"].get<bool>()) shapes[row["operation"].get<std::string>() + " " + row["kind"].get<std::string>()] = row["shape"];
    return shapes;
  };
  auto seed = shapes_of("so400m-seed-shards.json");
  EXPECT_EQ(seed["layer.qkv gemm_fp8"], "243x128x64");
  EXPECT_EQ(seed["layer.mlp.fc1 gemm_fp8"], "81x192x160");
  EXPECT_EQ(seed["layer.mlp.fc2 gemm_fp8"], "122x160x128");
  EXPECT_EQ(seed["layer.out gemm_fp8"], "146x96x48");
  EXPECT_EQ(seed["layer.attention attention_scores"], "81x80x72");  // queries x keys x head_dim
  auto pv = shapes_of("so400m-seed-pv-shards.json");
  EXPECT_EQ(pv["layer.attention attention_values"], "49x128x72x6");  // queries x keys x head_dim x key blocks
  EXPECT_EQ(pv["layer.qkv gemm_fp8"], seed["layer.qkv gemm_fp8"]);
}

// Issue 34, item 5: --plan fixes every grid, so a plan without one of the model's GEMM
// or attention ops is refused, naming the file and the op (one chip and a pipeline).
TEST_F(PlanCli, APlanFileMissingAnOpIsRefusedNamingTheFileAndOp) {
  ASSERT_EQ(run_tilevit(compile("--write-plan " + path("plan.json"))).exit_code, 0);
  auto plan = nlohmann::json::parse(test_support::read_all(path("plan.json")));
  plan["gemm"].erase("layer.qkv");
  std::ofstream(path("missing.json")) << plan.dump(1);
  test_support::expect_error_line(compile("--plan " + path("missing.json")), 3,
                                  {path("missing.json") + ": gemm.layer.qkv: missing", "compile --write-plan"});
  const std::string pipe = "compile --preset siglip2-tiny --machine test16x2 ";
  ASSERT_EQ(run_tilevit(pipe + "--write-plan " + path("pipe.json")).exit_code, 0);
  auto stages = nlohmann::json::parse(test_support::read_all(path("pipe.json")));
  stages["stages"][1]["plan"]["attention"].erase("layer.attention");
  std::ofstream(path("pipe_missing.json")) << stages.dump(1);
  test_support::expect_error_line(pipe + "--plan " + path("pipe_missing.json"), 3,
                                  {path("pipe_missing.json") + ": stages[1].plan: attention.layer.attention: missing"});
}

// Issue 34, item 10: a pin the compiler refuses (an unknown op, a grid too fine for the
// shape, a column quantum off the word) is the plan file's error: exit 3 naming the file;
// a field is named after the file with ": ", and a pipeline plan on one chip says so.
TEST_F(PlanCli, PlanMeaningErrorsNameTheFileAndAreBadInput) {
  ASSERT_EQ(run_tilevit(compile("--write-plan " + path("plan.json"))).exit_code, 0);
  const auto base = nlohmann::json::parse(test_support::read_all(path("plan.json")));
  auto write = [&](const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
    auto plan = base;
    edit(plan);
    std::ofstream(path(name)) << plan.dump(1);
    return path(name);
  };
  const auto unknown = write("unknown.json", [](auto& p) { p["gemm"]["layer.nope"] = {{"r", 1}, {"k", 1}, {"c", 1}}; });
  test_support::expect_error_line(compile("--plan " + unknown), 3, {unknown + ": pinned GEMM grid for op layer.nope"});
  const auto huge = write("huge.json", [](auto& p) { p["gemm"]["layer.qkv"] = {{"r", 4000}, {"k", 1}, {"c", 1}}; });
  test_support::expect_error_line(compile("--plan " + huge), 3, {huge + ": pinned GEMM grid 4000x1x1", "layer.qkv"});
  const auto quantum = write("cq.json", [](auto& p) { p["gemm"]["layer.qkv"]["column_quantum"] = 7; });
  test_support::expect_error_line(compile("--plan " + quantum), 3, {quantum + ": ", "column quantum 7"});
  const auto w = write("bad_w.json", [](auto& p) { p["exchange_stream_words"] = 3; });
  test_support::expect_error_line(compile("--plan " + w), 3, {w + ": exchange_stream_words: expected"});
  ASSERT_EQ(run_tilevit("compile --preset siglip2-tiny --machine test16x2 --write-plan " + path("pipe.json")).exit_code, 0);
  test_support::expect_error_line("compile --preset siglip2-tiny --machine test16 --plan " + path("pipe.json"), 3,
                                  {path("pipe.json") + ": a pipeline plan file", "not a one-chip plan"});
}
