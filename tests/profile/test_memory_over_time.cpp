// Memory over time (memory_over_time.hpp): per step, the fullest tile's and the chip's live
// bytes by purpose; the fullest tile's per-step maximum is exactly its peak_bytes.
#include <gtest/gtest.h>

#include <numeric>

#include "compiler/compile.hpp"
#include "profile/memory_map.hpp"
#include "profile/memory_map_json.hpp"

using namespace tilevit;

namespace {

compiler::CompiledModel compile_small(std::uint32_t layers, bool profiling) {
  model::ViTConfig c = model::ViTConfig::small();
  c.layers = layers;
  return compiler::compile_model(compiler::build_vit_graph(c, model::NumericsConfig::uniform(-4)), target::test16(),
                                 compiler::CompileOptions{compiler::Plan{{}, 1024}, {profiling, {}}});
}

template <typename A>
std::uint64_t total(const A& a) { return std::accumulate(a.begin(), a.end(), std::uint64_t{0}); }

}  // namespace

TEST(MemoryOverTime, FullestTilePeaksAtItsPeakBytes) {
  for (const std::uint32_t layers : {1u, 2u})
    for (const bool profiling : {false, true}) {
      const auto m = compile_small(layers, profiling);
      const auto map = profile::build_memory_map(target::test16(), m.executable.program, profiling);
      const auto& o = map.over_time;
      std::uint32_t fullest = 0;
      for (const auto& t : map.tiles) fullest = std::max(fullest, t.summary.peak_bytes);
      ASSERT_EQ(o.fullest.size(), map.steps);
      ASSERT_EQ(o.chip.size(), map.steps);
      std::uint64_t most = 0;
      for (std::size_t s = 0; s < o.fullest.size(); ++s) {
        most = std::max(most, total(o.fullest[s]));
        EXPECT_GE(total(o.chip[s]), total(o.fullest[s]));
      }
      EXPECT_EQ(most, fullest);
      EXPECT_EQ(o.peak_bytes, fullest);
      EXPECT_EQ(map.tiles[o.fullest_tile].summary.peak_bytes, fullest);
      EXPECT_EQ(total(o.fullest[o.peak_step]), fullest);
      EXPECT_EQ(map.tiles[o.fullest_tile].summary.peak_phase, o.peak_phase);
      ASSERT_FALSE(o.largest.empty());
      for (std::size_t i = 1; i < o.largest.size(); ++i) EXPECT_GE(o.largest[i - 1].bytes, o.largest[i].bytes);
      // Weights are live all along; some exchange buffer exists (GEMM operands are gathered).
      EXPECT_GT(o.fullest[0][std::size_t(profile::MemoryPurpose::weights)], 0u);
      std::uint64_t exchange = 0;
      for (const auto& s : o.chip) exchange += s[std::size_t(profile::MemoryPurpose::exchange)];
      EXPECT_GT(exchange, 0u);
      const auto j = profile::to_json(map)["over_time"];
      EXPECT_EQ(j["peak"]["bytes"].get<std::uint32_t>(), fullest);
      EXPECT_EQ(j["peak"]["label"].get<std::string>(), m.executable.program.steps[o.peak_step].label);
      EXPECT_EQ(j["purposes"].size(), profile::kMemoryPurposes);
    }
}
