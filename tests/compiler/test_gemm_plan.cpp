// Grid choice on tiny shapes and the 16-tile test machine: GEMM grids cover the shape in
// whole matrix-unit panels, stay inside the tiles and above min_tiles, and are the fastest
// admissible grid by their own estimate (every admissible grid enumerated here from the
// rules in gemm_plan.hpp); attention splits keep the working set under the cap; pins
// (PlanPins) replace the choice or are rejected naming the op.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "compiler/gemm_plan.hpp"
#include "support/error.hpp"
#include "target/kernel_costs.hpp"

namespace tilevit::compiler {
namespace {

using target::MachineDescription;

std::uint32_t ceil_div(std::uint32_t a, std::uint32_t b) { return (a + b - 1) / b; }

// Blocks of `splits` pieces of `extent`, each a multiple of `quantum` but the last; 0
// when that many pieces cannot all be non-empty.
std::uint32_t exact_block(std::uint32_t extent, std::uint32_t splits, std::uint32_t quantum) {
  const std::uint32_t block = std::min(extent, ceil_div(ceil_div(extent, splits), quantum) * quantum);
  return ceil_div(extent, block) == splits ? block : 0;
}

std::uint32_t k_quantum(const MachineDescription& m, const GemmShape& s) {
  return s.fp8 ? m.costs.gemm_fp8.panel_inner : m.costs.gemm_fp16.panel_inner;
}
std::uint32_t c_quantum(const MachineDescription& m, const GemmShape& s) {
  return s.fp8 ? m.costs.gemm_fp8.panel_columns : m.costs.gemm_fp16.panel_columns;
}
std::uint32_t panels(const MachineDescription& m, const GemmShape& s) {
  return ceil_div(s.inner, k_quantum(m, s)) * ceil_div(s.columns, c_quantum(m, s)) * s.rows;
}

// Every grid choose_gemm_grid may return for (tiles, min_tiles), with its estimate.
std::vector<GemmGrid> admissible_grids(const MachineDescription& m, const GemmShape& s, std::uint32_t tiles,
                                       std::uint32_t min_tiles) {
  std::vector<GemmGrid> out;
  for (std::uint32_t rg = 1; rg <= s.rows; ++rg)
    for (std::uint32_t kg = 1; kg <= ceil_div(s.inner, k_quantum(m, s)); ++kg)
      for (std::uint32_t cg = 1; cg <= ceil_div(s.columns, c_quantum(m, s)); ++cg) {
        GemmGrid g{rg, kg, cg, exact_block(s.rows, rg, 1), exact_block(s.inner, kg, k_quantum(m, s)),
                   exact_block(s.columns, cg, c_quantum(m, s)), 0};
        if (!g.r_block || !g.k_block || !g.c_block || g.tiles() > tiles) continue;
        if (g.tiles() < std::min(min_tiles, panels(m, s))) continue;
        g.estimated_cycles = estimate_gemm_cycles(m, s, g.r_block, rg, g.k_block, g.c_block, kg);
        out.push_back(g);
      }
  return out;
}

const std::vector<GemmShape> kShapes = {{10, 100, 40, true}, {7, 64, 48, false}, {1, 32, 16, true}, {33, 200, 70, false}};

void expect_same_grid(const GemmGrid& a, const GemmGrid& b) {
  EXPECT_EQ(a.r_splits, b.r_splits);
  EXPECT_EQ(a.k_splits, b.k_splits);
  EXPECT_EQ(a.c_splits, b.c_splits);
  EXPECT_EQ(a.r_block, b.r_block);
  EXPECT_EQ(a.k_block, b.k_block);
  EXPECT_EQ(a.c_block, b.c_block);
  EXPECT_EQ(a.estimated_cycles, b.estimated_cycles);
}

// Blocks of `block` elements, `splits` of them, cover `extent` with none empty.
void expect_covers(std::uint32_t extent, std::uint32_t splits, std::uint32_t block, const char* what) {
  EXPECT_GE(std::uint64_t(block) * splits, extent) << what;
  EXPECT_LT(std::uint64_t(block) * (splits - 1), extent) << what << ": an empty block";
}

TEST(GemmGrid, BlocksCoverTheShapeInWholePanelsWithinTheTiles) {
  const MachineDescription& m = target::test16();
  for (const GemmShape& s : kShapes)
    for (std::uint32_t tiles : {1u, 4u, m.tiles})
      for (std::uint32_t min_tiles : {1u, tiles - tiles / 4, tiles}) {
        const GemmGrid g = choose_gemm_grid(m, s, tiles, min_tiles);
        SCOPED_TRACE(std::to_string(s.rows) + "x" + std::to_string(s.inner) + "x" + std::to_string(s.columns) + " on " +
                     std::to_string(tiles) + " min " + std::to_string(min_tiles));
        expect_covers(s.rows, g.r_splits, g.r_block, "rows");
        expect_covers(s.inner, g.k_splits, g.k_block, "inner");
        expect_covers(s.columns, g.c_splits, g.c_block, "columns");
        EXPECT_TRUE(g.k_splits == 1 ? g.k_block == s.inner : g.k_block % k_quantum(m, s) == 0) << g.k_block;
        EXPECT_TRUE(g.c_splits == 1 ? g.c_block == s.columns : g.c_block % c_quantum(m, s) == 0) << g.c_block;
        EXPECT_LE(g.tiles(), tiles);
        EXPECT_GE(g.tiles(), std::min(min_tiles, panels(m, s)));
      }
}

TEST(GemmGrid, NoAdmissibleGridIsEstimatedFaster) {
  const MachineDescription& m = target::test16();
  for (const GemmShape& s : kShapes)
    for (std::uint32_t min_tiles : {1u, 8u, 12u}) {
      const GemmGrid chosen = choose_gemm_grid(m, s, m.tiles, min_tiles);
      EXPECT_EQ(chosen.estimated_cycles,
                estimate_gemm_cycles(m, s, chosen.r_block, chosen.r_splits, chosen.k_block, chosen.c_block,
                                     chosen.k_splits));
      bool listed = false;
      for (const GemmGrid& g : admissible_grids(m, s, m.tiles, min_tiles)) {
        EXPECT_LE(chosen.estimated_cycles, g.estimated_cycles) << g.r_splits << "x" << g.k_splits << "x" << g.c_splits;
        if (g.estimated_cycles == chosen.estimated_cycles) {
          EXPECT_LE(chosen.tiles(), g.tiles()) << "ties: fewer tiles";
        }
        listed |= g.r_splits == chosen.r_splits && g.k_splits == chosen.k_splits && g.c_splits == chosen.c_splits;
      }
      EXPECT_TRUE(listed) << "the chosen grid breaks a rule";
    }
}

// The bytes one tile spends on a GEMM, by hand for a 2 x 2 x 1 grid of 10 rows, K 64,
// 16 columns in FP8 over 3 layers: row pieces of the 32 x 16 weight block (16 rows each)
// resident for 3 layers; computing: A 5 x 32, the whole weight block, partials 5 x 16 x 2.
TEST(GemmGridMemory, TileBytesByHand) {
  const GemmShape s{10, 64, 16, true};
  const GemmGrid g{2, 2, 1, 5, 32, 16, 0};
  const std::uint64_t resident = 16 * 16, computing = 5 * 32 + 32 * 16 + 5 * 16 * 2;
  EXPECT_EQ(gemm_tile_bytes(s, g, 3), 3 * resident + computing);
  // Rg = 1: the whole block resident, no copy; Kg > 1 with small A: the reduce-scatter's
  // partial sums and received parts (2 x partials) can be the larger working set.
  const GemmShape wide{4, 64, 256, true};
  const GemmGrid k_only{1, 2, 1, 4, 32, 256, 0};
  EXPECT_EQ(gemm_tile_bytes(wide, k_only, 1), 32u * 256 + std::max<std::uint64_t>(4 * 32 + 4 * 256 * 2, 2 * 4 * 256 * 2));
}

// Under a cap the choice is the fastest grid within it, else the one needing the fewest
// bytes; with no cap (0) it is the plain choice (every package unchanged).
TEST(GemmGridMemory, CapPicksTheFastestGridWithinIt) {
  const MachineDescription& m = target::test16();
  for (const GemmShape& s : kShapes) {
    const GemmGrid fastest = choose_gemm_grid(m, s, m.tiles, 1);
    expect_same_grid(choose_gemm_grid(m, s, m.tiles, 1, GemmMemoryCap{0, 4}), fastest);
    std::uint64_t least = UINT64_MAX, most = 0;
    for (const GemmGrid& g : admissible_grids(m, s, m.tiles, 1)) {
      least = std::min(least, gemm_tile_bytes(s, g, 4));
      most = std::max(most, gemm_tile_bytes(s, g, 4));
    }
    SCOPED_TRACE(std::to_string(s.rows) + "x" + std::to_string(s.inner) + "x" + std::to_string(s.columns));
    const std::uint64_t cap = (least + most) / 2;
    const GemmGrid capped = choose_gemm_grid(m, s, m.tiles, 1, GemmMemoryCap{cap, 4});
    EXPECT_LE(gemm_tile_bytes(s, capped, 4), cap);
    for (const GemmGrid& g : admissible_grids(m, s, m.tiles, 1))
      if (gemm_tile_bytes(s, g, 4) <= cap) EXPECT_LE(capped.estimated_cycles, g.estimated_cycles);
    const GemmGrid tight = choose_gemm_grid(m, s, m.tiles, 1, GemmMemoryCap{1, 4});
    EXPECT_EQ(gemm_tile_bytes(s, tight, 4), least) << "no grid within 1 B: the fewest bytes";
  }
}

TEST(GemmGrid, SameInputsSameGrid) {
  for (const GemmShape& s : kShapes)
    expect_same_grid(choose_gemm_grid(target::test16(), s, 16, 12), choose_gemm_grid(target::test16(), s, 16, 12));
}

TEST(GemmGrid, MinTilesBeyondTheTilesIsAnInternalError) {
  try {
    choose_gemm_grid(target::test16(), GemmShape{10, 100, 40, true}, 2, 4);
    FAIL() << "a grid of at least 4 tiles on 2";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitInternal);
    EXPECT_NE(std::string(e.what()).find("10x100x40 on 2 tiles"), std::string::npos) << e.what();
  }
}

TEST(GemmEstimate, ChargesTheReceivedOperandsAndTheReduction) {
  const MachineDescription& m = target::test16();
  const GemmShape s{8, 64, 32, true};
  const std::uint64_t alone = estimate_gemm_cycles(m, s, 8, 1, 64, 32, 1);
  // One tile: the kernel, the left operand arriving (1-byte elements), one sync.
  EXPECT_EQ(alone, target::gemm_cycles(m, target::Precision::fp8, 8, 64, 32) +
                       m.exchange_cycles(8 * 64) + m.phase_overhead_cycles);
  // Shared weight block (Rg > 1) arrives too; K split adds a reduce-scatter and its sums.
  EXPECT_EQ(estimate_gemm_cycles(m, s, 8, 2, 64, 32, 1), alone + m.exchange_cycles(64 * 32));
  EXPECT_GT(estimate_gemm_cycles(m, s, 8, 1, 64, 32, 2), alone + m.phase_overhead_cycles);
  EXPECT_GT(estimate_gemm_cycles(m, GemmShape{8, 64, 32, false}, 8, 1, 64, 32, 1), alone);  // FP16 is slower
}

TEST(PlanGemmGrid, WithoutAPinTheChoiceUsesMostOfTheChip) {
  const MachineDescription& m = target::test16();
  PlanPins others;
  others.gemm["another.op"] = GemmSplits{1, 1, 1};
  for (const GemmShape& s : kShapes) {
    const GemmGrid planned = plan_gemm_grid(m, s, 16, others, "layer.qkv");
    expect_same_grid(planned, choose_gemm_grid(m, s, 16, 12));
    EXPECT_GE(planned.tiles(), std::min(12u, panels(m, s)));
  }
}

TEST(PlanGemmGrid, PinnedSplitsAreUsedWithTheirBlocks) {
  const MachineDescription& m = target::test16();
  const GemmShape s{10, 100, 40, true};
  PlanPins pins;
  pins.gemm["layer.mlp.fc2"] = GemmSplits{2, 2, 3};
  const GemmGrid g = plan_gemm_grid(m, s, 16, pins, "layer.mlp.fc2");
  expect_same_grid(g, GemmGrid{2, 2, 3, 5, 64, 16, estimate_gemm_cycles(m, s, 5, 2, 64, 16, 2)});
}

TEST(PlanGemmGrid, AColumnQuantumSetsTheColumnBlocks) {
  const MachineDescription& m = target::test16();
  const GemmShape s{10, 100, 40, true};
  PlanPins pins;
  pins.gemm["layer.qkv"] = GemmSplits{1, 2, 4, 12};  // 12-column blocks (an attention head), not 16
  const GemmGrid g = plan_gemm_grid(m, s, 16, pins, "layer.qkv");
  EXPECT_EQ(g.c_block, 12u);
  EXPECT_EQ(g.column_quantum, 12u);
  EXPECT_EQ(g.estimated_cycles, estimate_gemm_cycles(m, s, 10, 1, 64, 12, 2));
  std::uint32_t visited = 0;
  for_each_gemm_grid(m, s, 16, [&](const GemmGrid& grid) {
    ++visited;
    EXPECT_EQ(grid.c_splits, 4u);  // 40 columns in blocks of 12
    EXPECT_EQ(grid.c_block, 12u);
    EXPECT_EQ(grid.column_quantum, 12u);
  }, 12);
  EXPECT_GT(visited, 0u);
}

TEST(PlanGemmGrid, AColumnQuantumNotOfWholeWordsIsRejected) {
  PlanPins pins;
  pins.gemm["layer.qkv"] = GemmSplits{1, 1, 4, 10};
  try {
    plan_gemm_grid(target::test16(), GemmShape{10, 100, 40, true}, 16, pins, "layer.qkv");
    ADD_FAILURE() << "a 10-column quantum accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_NE(std::string(e.what()).find("column quantum 10 is not a multiple of 4"), std::string::npos) << e.what();
  }
}

void expect_pin_rejected(const std::function<void()>& plan, const std::string& op, const std::string& why) {
  try {
    plan();
    ADD_FAILURE() << "accepted a pin that " << why;
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.exit_code(), kExitUsage) << message;
    EXPECT_NE(message.find("for op " + op), std::string::npos) << message;
    EXPECT_NE(message.find(why), std::string::npos) << message;
  }
}

TEST(PlanGemmGrid, PinNotFittingTheShapeOrTheTilesNamesTheOp) {
  const GemmShape s{10, 100, 40, true};
  auto plan_with = [&](GemmSplits splits) {
    return [=] {
      PlanPins pins;
      pins.gemm["layer.qkv"] = splits;
      plan_gemm_grid(target::test16(), s, 16, pins, "layer.qkv");
    };
  };
  // 100 deep in 32-deep panels: 5 blocks would leave one empty.
  expect_pin_rejected(plan_with({1, 5, 1}), "layer.qkv",
                      "inner dimension (100) cannot be cut into 5 blocks of whole 32-element panels");
  expect_pin_rejected(plan_with({11, 1, 1}), "layer.qkv", "rows (10) cannot be cut into 11 blocks");
  expect_pin_rejected(plan_with({0, 1, 1}), "layer.qkv", "rows (10) cannot be cut into 0 blocks");
  expect_pin_rejected(plan_with({4, 2, 3}), "layer.qkv", "needs 24 tiles, the machine has 16");
}

// ---- attention -----------------------------------------------------------------------

struct AttentionCase {
  std::uint32_t queries, keys, head_dim, heads, tiles, cap;
};
constexpr AttentionCase kAttention{17, 17, 8, 2, 16, 2000};  // 1 x 1 needs 3,264 B: over the cap

// (query_block, key_block, key blocks) of every split the grid may use, cap aside.
struct Split {
  std::uint32_t query_block, key_block, key_blocks;
};
std::vector<Split> attention_splits(const AttentionCase& a) {
  std::vector<Split> out;
  const std::uint32_t per_head = std::max(1u, a.tiles / a.heads);
  for (std::uint32_t qbs = 1; qbs <= a.queries; ++qbs)
    for (std::uint32_t kbs = 1; kbs <= a.keys; ++kbs) {
      const std::uint32_t qb = exact_block(a.queries, qbs, 1), kb = exact_block(a.keys, kbs, 1);
      if (qb && kb && qbs * kbs <= per_head) out.push_back(Split{qb, kb, kbs});
    }
  return out;
}

AttentionGrid choose(const AttentionCase& a) {
  return choose_attention_grid(target::test16(), a.queries, a.keys, a.head_dim, a.heads, a.tiles, a.cap);
}

TEST(AttentionGrid, WorkingSetUnderTheCapAndBlocksCoverQueriesAndKeys) {
  const AttentionGrid g = choose(kAttention);
  const std::uint32_t qbs = ceil_div(kAttention.queries, g.query_block), kbs = ceil_div(kAttention.keys, g.key_block);
  expect_covers(kAttention.queries, qbs, g.query_block, "queries");
  expect_covers(kAttention.keys, kbs, g.key_block, "keys");
  EXPECT_LE(qbs * kbs, kAttention.tiles / kAttention.heads);
  EXPECT_LE(attention_tile_bytes(g.query_block, g.key_block, kAttention.head_dim, kbs), kAttention.cap);
  // At least Q, K, V (f16) and the FP32 scores are on the tile at once.
  const std::uint32_t d = kAttention.head_dim;
  EXPECT_LE(g.query_block * d * 2 + 2 * g.key_block * d * 2 + g.query_block * g.key_block * 4, kAttention.cap);
  EXPECT_GT(qbs * kbs, 1u);  // the cap forced a split
}

TEST(AttentionGrid, NoSplitUnderTheCapIsEstimatedFaster) {
  const AttentionGrid g = choose(kAttention);
  const std::uint32_t kbs = ceil_div(kAttention.keys, g.key_block);
  const MachineDescription& m = target::test16();
  EXPECT_EQ(g.estimated_cycles, estimate_attention_cycles(m, g.query_block, g.key_block, kAttention.head_dim, kbs));
  for (const Split& s : attention_splits(kAttention)) {
    if (attention_tile_bytes(s.query_block, s.key_block, kAttention.head_dim, s.key_blocks) > kAttention.cap) continue;
    const std::uint64_t cycles =
        estimate_attention_cycles(m, s.query_block, s.key_block, kAttention.head_dim, s.key_blocks);
    EXPECT_LE(g.estimated_cycles, cycles) << s.query_block << "x" << s.key_block;
  }
}

TEST(AttentionGrid, NothingUnderTheCapGivesTheSmallestWorkingSet) {
  AttentionCase tight = kAttention;
  tight.cap = 1;
  const AttentionGrid g = choose(tight);
  EXPECT_EQ(g.estimated_cycles, 0u);  // not estimated: placement reports the tile
  const auto bytes = [&](const Split& s) {
    return attention_tile_bytes(s.query_block, s.key_block, tight.head_dim, s.key_blocks);
  };
  const Split chosen{g.query_block, g.key_block, ceil_div(tight.keys, g.key_block)};
  for (const Split& s : attention_splits(tight)) EXPECT_LE(bytes(chosen), bytes(s));
}

TEST(PlanAttentionGrid, PinnedBlocksAreUsedOrRejectedNamingTheOp) {
  const AttentionCase& a = kAttention;
  auto plan = [&](AttentionBlocks blocks) {
    PlanPins pins;
    pins.attention["layer.attention"] = blocks;
    return plan_attention_grid(target::test16(), a.queries, a.keys, a.head_dim, a.heads, a.tiles, pins,
                               "layer.attention");
  };
  const AttentionGrid g = plan({5, 9});  // 4 query blocks x 2 key blocks = the 8 tiles of a head
  EXPECT_EQ(g.query_block, 5u);
  EXPECT_EQ(g.key_block, 9u);
  EXPECT_EQ(g.estimated_cycles, estimate_attention_cycles(target::test16(), 5, 9, a.head_dim, 2));
  EXPECT_EQ(plan_attention_grid(target::test16(), a.queries, a.keys, a.head_dim, a.heads, a.tiles, {}, "layer.attention")
                .key_block,
            choose_attention_grid(target::test16(), a.queries, a.keys, a.head_dim, a.heads, a.tiles).key_block);
  expect_pin_rejected([&] { plan({0, 9}); }, "layer.attention", "blocks must be 1..17 queries and 1..17 keys");
  expect_pin_rejected([&] { plan({5, 18}); }, "layer.attention", "blocks must be 1..17 queries");
  expect_pin_rejected([&] { plan({2, 2}); }, "layer.attention", "needs 81 tiles per head, 2 heads on 16 tiles");
}

}  // namespace
}  // namespace tilevit::compiler
