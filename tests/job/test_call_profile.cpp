// A call's profile as `tilevit run` writes it, for a pipeline over test16x2 (siglip2-tiny,
// two layers per chip, two micro-batches): one profile of the system whose chips keep
// their stage's loop and operation bounds, so the ideal-against-achieved figures are those
// of one chip's profile: per operation the achieved compute tile-cycles sum to the call's
// (every loop iteration, the ones not in detail extrapolated per chip), per step to the
// span, and each chip's bounds are its own stage program's.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "compiler/plan_bound.hpp"
#include "job/run_job.hpp"
#include "profile/bounds.hpp"
#include "profile/profile_file.hpp"
#include "system/pipeline.hpp"

using namespace tilevit;

namespace {

system::CompiledPipeline tiny_pipeline(compiler::ProfileDetail detail) {
  model::ViTConfig c = model::ViTConfig::preset("siglip2-tiny");  // 4 layers: 2 per chip
  c.batch = 1;
  compiler::CompileOptions options;
  options.profiling = {true, detail};
  system::CompiledPipeline p = system::compile_pipeline(c, model::NumericsConfig::uniform(-4), target::test16x2(), options);
  p.micro_batches = 2;
  return p;
}

profile::Profile system_profile_of(const system::CompiledPipeline& pipeline) {
  job::RunPackage package;
  package.pipeline = &pipeline;
  return profile::decode_profile(profile::encode_profile(job::call_profile(package)), "x2.tvprof");  // through the file
}

std::uint64_t sum_achieved(const std::vector<profile::BoundRow>& rows) {
  std::int64_t sum = 0;
  for (const auto& r : rows) sum += r.achieved;
  return std::uint64_t(sum);
}

}  // namespace

TEST(SystemCallProfile, EachChipHasItsStagesBoundsForEveryMicroBatch) {
  const system::CompiledPipeline pipeline = tiny_pipeline({compiler::Granularity::phase, 1});
  const profile::Profile p = system_profile_of(pipeline);
  ASSERT_EQ(p.row_groups.size(), 3u);  // chip 0, chip 1, links
  for (std::uint32_t s = 0; s < 2; ++s) {
    const compiler::Executable& chip = pipeline.stages[s].executable;
    EXPECT_EQ(p.row_groups[s].loop_count, 2u) << "chip " << s << " runs its stage's two layers";
    const auto graph = compiler::build_stage_graph(chip.config, chip.numerics, chip.stage, pipeline.stages[s].layers);
    double expected = 0, recorded = 0;
    for (const auto& b : compiler::operation_lower_bounds(graph, chip.machine)) expected += std::uint64_t(b.tile_cycles + 0.5);
    for (const auto& b : p.operation_bounds)
      if (b.row_group == s) recorded += double(b.tile_cycles);
    EXPECT_GT(expected, 0);
    EXPECT_EQ(recorded, 2 * expected) << "chip " << s << ": its stage's ops, both micro-batches";
  }
  for (const auto& b : p.operation_bounds) EXPECT_LT(b.row_group, 2u) << b.name << ": no op runs on a link";
}

TEST(SystemCallProfile, AchievedSumsAreTheCallsAndRatiosAtLeastOne) {
  for (const auto g : {compiler::Granularity::phase, compiler::Granularity::kernel}) {
    const profile::Profile p = system_profile_of(tiny_pipeline({g, 1}));  // 1 of each chip's 2 layers in detail
    const profile::BoundReport r = profile::bound_report(p);
    ASSERT_TRUE(r.available);
    EXPECT_EQ(sum_achieved(r.operations), p.tile_cycles[std::size_t(profile::SampleKind::compute)]);
    EXPECT_EQ(sum_achieved(r.steps), p.span);
    double op_bound = 0, recorded = 0;
    for (const auto& b : r.operations) op_bound += b.bound;
    for (const auto& b : p.operation_bounds) recorded += double(b.tile_cycles);
    EXPECT_NEAR(op_bound, recorded, 1e-6 * recorded);
    EXPECT_NEAR(r.call_bound, recorded / 32, 1e-6 * recorded);  // over the 32 tiles of both chips
    for (const auto& b : r.operations)
      if (b.bound > 0) EXPECT_GE(b.ratio(), 1.0) << b.key;
    std::size_t bounded_steps = 0;
    for (const auto& b : r.steps) {
      if (b.bound <= 0) continue;
      ++bounded_steps;
      EXPECT_GE(b.ratio(), 1.0) << b.key;
      EXPECT_EQ(b.key.rfind("chip ", 0), 0u) << b.key << ": a step of one chip and micro-batch";
    }
    EXPECT_GT(bounded_steps, 0u);
    const auto j = profile::to_json(r, SIZE_MAX);
    EXPECT_EQ(j["operations"]["achieved_sum"].get<std::uint64_t>(), j["operations"]["compute_tile_cycles"].get<std::uint64_t>());
    EXPECT_EQ(j["steps"]["achieved_sum"].get<std::uint64_t>(), p.span);
  }
}
