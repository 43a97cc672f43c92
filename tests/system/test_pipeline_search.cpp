// The plan search per pipeline stage (system/pipeline.hpp, docs/SCALE_OUT.md): each stage
// searched from its heuristic plan, never slower; the same package at any thread count;
// the report's figures; a time cap shared by the stages; stages that fit only under the
// GEMM memory cap still searched (their non-fitting candidates skipped).
#include <gtest/gtest.h>

#include "model/random_model.hpp"
#include "reference/forward.hpp"
#include "system/pipeline.hpp"
#include "system/pipeline_device.hpp"
#include "system/pipeline_package.hpp"
#include "system/pipeline_plan_file.hpp"
#include "tiny_pipeline.hpp"

using namespace tilevit;

namespace {

model::ViTConfig tiny(int batch = 2) { return test_support::tiny_pipeline_model(batch); }

system::CompiledPipeline compile(const model::ViTConfig& c, std::uint32_t steps, std::uint32_t threads = 1,
                                 double seconds = 0) {
  return system::compile_pipeline(c, model::NumericsConfig::uniform(-4), target::test16x2(), {},
                                  system::StageSearchOptions{steps, seconds, threads, {}});
}

TEST(PipelineSearch, EveryStageIsNeverSlowerThanItsHeuristicPlan) {
  const auto heuristic = compile(tiny(), 0);
  const auto searched = compile(tiny(), 4);
  ASSERT_EQ(searched.stages.size(), heuristic.stages.size());
  bool some_faster = false;
  for (std::size_t s = 0; s < searched.stages.size(); ++s) {
    const auto& stage = searched.stages[s];
    EXPECT_FALSE(heuristic.stages[s].search);
    ASSERT_TRUE(stage.search);
    EXPECT_EQ(stage.layers, heuristic.stages[s].layers);  // balanced by the heuristic plans
    EXPECT_EQ(stage.search->baseline_cycles, heuristic.stages[s].stats.estimated_cycles);
    EXPECT_LE(stage.stats.estimated_cycles, stage.search->baseline_cycles);
    EXPECT_EQ(stage.search->steps, 4u);
    EXPECT_LE(stage.search->evaluated, 4u);
    EXPECT_GT(stage.search->evaluated, 0u);
    some_faster |= stage.stats.estimated_cycles < stage.search->baseline_cycles;
  }
  EXPECT_TRUE(some_faster);  // the tiny model's stages gain at 4 steps
  EXPECT_NE(searched.plan, heuristic.plan);
}

// At 8 steps stage 1 of the tiny model takes other K blocks than stage 0 (checked): the
// device-numerics reference splits each layer's sums as its stage does, bit for bit.
TEST(PipelineSearch, StagesSplittingSumsDifferentlyRunBitExact) {
  const auto c = tiny();
  const auto p = compile(c, 8);
  const auto layers = system::pipeline_layer_numerics(p);
  ASSERT_EQ(layers.size(), 4u);
  bool differ = false;
  for (const auto& n : layers) differ |= n.inner_block != layers.front().inner_block ||
                                        n.attention_key_block != layers.front().attention_key_block;
  EXPECT_TRUE(differ);
  const auto weights = model::load_weights(model::RandomModelSource(c, 3), c);
  std::vector<std::vector<float>> images;
  for (int i = 0; i < c.batch; ++i) images.push_back(model::random_image(c, 3, i));
  system::PipelineDevice device(p, 0, 2);
  device.upload_weights(weights);
  EXPECT_EQ(device.run(images, nullptr).output,
            reference::DeviceNumericsModel(weights, system::pipeline_numerics(p), layers).forward(images));
}

TEST(PipelineSearch, SamePackageAtAnyThreadCount) {
  const auto one = system::encode_pipeline(compile(tiny(), 3, 1)).bytes();
  EXPECT_EQ(system::encode_pipeline(compile(tiny(), 3, 2)).bytes(), one);
}

TEST(PipelineSearch, ReportHasEachStagesSearchAndTheHeuristicFigures) {
  const auto p = compile(tiny(), 3);
  const nlohmann::json j = system::pipeline_json(p);
  EXPECT_EQ(j["plan"], "searched per stage, up to 3 candidates each (--optimization-steps 3)");
  std::vector<std::uint64_t> baseline;
  for (std::size_t s = 0; s < p.stages.size(); ++s) {
    const auto& search = j["stages"][s]["search"];
    EXPECT_EQ(search["baseline_cycles"], p.stages[s].search->baseline_cycles);
    EXPECT_EQ(search["result_cycles"], p.stages[s].stats.estimated_cycles);
    EXPECT_EQ(search["steps"], 3);
    EXPECT_EQ(search["candidates_compiled"], p.stages[s].search->evaluated);
    baseline.push_back(p.stages[s].search->baseline_cycles);
  }
  const auto before = system::pipeline_figures(p, baseline);
  EXPECT_EQ(j["heuristic"]["latency_cycles"], before.latency_cycles);
  EXPECT_EQ(j["heuristic"]["interval_cycles"], before.interval_cycles);
  EXPECT_GE(before.latency_cycles, j["latency_cycles"].get<std::uint64_t>());
  EXPECT_GE(before.interval_cycles, j["interval_cycles"].get<std::uint64_t>());
  EXPECT_FALSE(system::pipeline_json(compile(tiny(), 0)).contains("heuristic"));
}

TEST(PipelineSearch, UsedUpTimeCapLeavesLaterStagesHeuristic) {
  // A cap far below one compile: the first stage's search is cut after its baseline, and
  // no time is left for the second, which keeps its heuristic plan.
  const auto heuristic = compile(tiny(), 0);
  const auto p = compile(tiny(), 8, 1, 1e-9);
  for (std::size_t s = 0; s < p.stages.size(); ++s) {
    ASSERT_TRUE(p.stages[s].search);
    EXPECT_TRUE(p.stages[s].search->cut_by_time);
    EXPECT_EQ(p.stages[s].search->evaluated, 0u);
    EXPECT_EQ(p.stages[s].stats.estimated_cycles, heuristic.stages[s].stats.estimated_cycles);
  }
  EXPECT_EQ(p.stages[1].search->stopped, "time cap: no time left for this stage");
}

// The small model, 64 layers of batch 4 over test16x2: each stage fits only with its
// GEMM grids re-chosen under a cap; the search's candidates that do not fit are skipped.
TEST(PipelineSearch, StagesThatFitOnlyUnderTheGemmCapAreSearched) {
  model::ViTConfig c = model::ViTConfig::small();
  c.layers = c.max_layers = 64;
  c.batch = 4;
  const auto heuristic = compile(c, 0);
  const auto p = compile(c, 3);
  ASSERT_EQ(p.stages.size(), 2u);
  // Each pipeline's plan rebuilds its package: the capped grids pinned fit without a cap.
  for (const auto* q : {&heuristic, &p})
    EXPECT_EQ(system::encode_pipeline(system::compile_pipeline(c, model::NumericsConfig::uniform(-4), target::test16x2(),
                                                               {}, {}, system::pipeline_plan(*q)))
                  .bytes(),
              system::encode_pipeline(*q).bytes());
  bool capped = false;
  for (std::size_t s = 0; s < p.stages.size(); ++s) {
    const auto& stage = p.stages[s];
    ASSERT_TRUE(stage.search);
    capped |= heuristic.stages[s].stats.gemm_tile_bytes_cap > 0;
    EXPECT_EQ(stage.search->baseline_cycles, heuristic.stages[s].stats.estimated_cycles);
    EXPECT_LE(stage.stats.estimated_cycles, stage.search->baseline_cycles);
    EXPECT_LE(stage.stats.peak_tile_bytes, target::test16().free_bytes_per_tile(false));
  }
  EXPECT_TRUE(capped);
}

}  // namespace
