// compile --write-plan / --plan and run --plan as a user runs them.
#include <gtest/gtest.h>

#include <fstream>
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
