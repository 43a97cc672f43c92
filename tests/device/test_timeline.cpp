#include <gtest/gtest.h>

#include "compiler/compile.hpp"
#include "device/timeline.hpp"

using namespace tilevit;

namespace {
compiler::CompiledModel small() {
  return compiler::compile_model(compiler::build_vit_graph(model::ViTConfig::small(), model::NumericsConfig::uniform(-4)),
                                 target::test16(), {});
}
}  // namespace

TEST(Timeline, SpanEqualsTheCompilerEstimateAndTilesAreAlwaysAccountedFor) {
  const auto m = small();
  const auto t = device::build_timeline(target::test16(), m.lowered.program);
  EXPECT_EQ(t.span, m.stats.estimated_cycles);
  std::uint64_t total = 0;
  for (auto c : t.tile_cycles) total += c;
  EXPECT_EQ(total, t.span * 16);  // every tile is doing something (or idle) every cycle
  for (const auto& tile : t.tiles) {
    std::uint64_t at = 0;
    for (const auto& i : tile) {
      EXPECT_EQ(i.start, at);  // contiguous, in order
      EXPECT_LT(i.start, i.end);
      at = i.end;
    }
    EXPECT_EQ(at, t.span);
  }
  EXPECT_GT(t.tile_cycles[static_cast<int>(device::Activity::compute)], 0u);
  EXPECT_GT(t.tile_cycles[static_cast<int>(device::Activity::exchange)], 0u);
  EXPECT_EQ(t.tile_cycles[static_cast<int>(device::Activity::sync)] % (16 * target::test16().sync_cycles), 0u);
}

TEST(Timeline, LaterIterationsCanBeSummarised) {
  const auto m = small();
  const auto full = device::build_timeline(target::test16(), m.lowered.program);
  const auto brief = device::build_timeline(target::test16(), m.lowered.program, 1);
  EXPECT_EQ(brief.span, full.span);
  EXPECT_EQ(brief.tile_cycles, full.tile_cycles);
  std::size_t a = 0, b = 0;
  for (std::size_t i = 0; i < 16; ++i) a += full.tiles[i].size(), b += brief.tiles[i].size();
  EXPECT_LT(b, a);
}
