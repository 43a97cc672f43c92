// Exchange planning on hand-made distributions: plan_transfers turns a tile's need into
// one transfer per contiguous run with the right offsets and sizes, takes pieces from
// every block a need spans, merges identical runs into one multicast, and refuses a need
// the source does not cover; exchange_load counts a multicast once for its sender.
#include <gtest/gtest.h>

#include <vector>

#include "compiler/distribution.hpp"
#include "support/error.hpp"

namespace tilevit::compiler {
namespace {

constexpr std::uint32_t kElement = 2;  // f16 bytes
constexpr std::uint32_t kCols = 6;
constexpr std::uint32_t kRowBytes = kCols * kElement;

// A 4 x 6 f16 tensor: rows 0-1 on tile 0 (allocation 10, from byte 100), rows 2-3 on
// tile 1 (allocation 11, from byte 0); each block compact, row stride 6 elements.
Distribution two_row_blocks() {
  Distribution d;
  d.rows = 4;
  d.cols = kCols;
  d.dtype = DType::f16;
  d.layer_stride = 4096;
  d.blocks = {Block{0, 2, 0, kCols, 0, 10, 100}, Block{2, 2, 0, kCols, 1, 11, 0}};
  return d;
}

std::vector<Transfer> plan(const Distribution& source, const std::vector<Need>& needs) {
  std::vector<Transfer> out;
  plan_transfers(source, needs, out);
  return out;
}

void expect_endpoint(const Endpoint& e, std::uint32_t tile, std::uint32_t allocation, std::uint32_t offset) {
  EXPECT_EQ(e.tile, tile);
  EXPECT_EQ(e.allocation, allocation);
  EXPECT_EQ(e.offset, offset);
}

TEST(PlanTransfers, WholeRowsFromOneBlockAreOneRun) {
  // Tile 5 wants rows 0-1, every column, at byte 8 of its allocation 20.
  const auto t = plan(two_row_blocks(), {Need{5, 20, 8, 0, 2, 0, kCols}});
  ASSERT_EQ(t.size(), 1u);
  expect_endpoint(t[0].source, 0, 10, 100);
  EXPECT_EQ(t[0].bytes, 2 * kRowBytes);
  EXPECT_EQ(t[0].source_layer_stride, 4096u);  // per-layer sequences walk the source
  ASSERT_EQ(t[0].destinations.size(), 1u);
  expect_endpoint(t[0].destinations[0], 5, 20, 8);
}

TEST(PlanTransfers, ColumnSliceIsOneRunPerRow) {
  // Rows 0-1, columns 2-4: the rows are not contiguous in the source, so one run each.
  const auto t = plan(two_row_blocks(), {Need{5, 20, 0, 0, 2, 2, 3}});
  ASSERT_EQ(t.size(), 2u);
  for (std::uint32_t r = 0; r < 2; ++r) {
    expect_endpoint(t[r].source, 0, 10, 100 + r * kRowBytes + 2 * kElement);
    EXPECT_EQ(t[r].bytes, 3 * kElement);
    ASSERT_EQ(t[r].destinations.size(), 1u);
    expect_endpoint(t[r].destinations[0], 5, 20, r * 3 * kElement);  // compact in the destination
  }
}

TEST(PlanTransfers, NeedSpanningTwoBlocksTakesFromBoth) {
  // Rows 1-2: row 1 from tile 0, row 2 from tile 1, stacked in the destination.
  const auto t = plan(two_row_blocks(), {Need{7, 30, 0, 1, 2, 0, kCols}});
  ASSERT_EQ(t.size(), 2u);
  expect_endpoint(t[0].source, 0, 10, 100 + kRowBytes);
  EXPECT_EQ(t[0].bytes, kRowBytes);
  expect_endpoint(t[0].destinations.at(0), 7, 30, 0);
  expect_endpoint(t[1].source, 1, 11, 0);
  EXPECT_EQ(t[1].bytes, kRowBytes);
  expect_endpoint(t[1].destinations.at(0), 7, 30, kRowBytes);
}

TEST(PlanTransfers, IdenticalRunsWantedByManyTilesAreOneMulticast) {
  const std::vector<Need> needs = {Need{5, 20, 0, 2, 2, 0, kCols}, Need{6, 21, 64, 2, 2, 0, kCols},
                                   Need{7, 22, 0, 2, 2, 0, kCols}, Need{8, 23, 0, 0, 1, 0, kCols}};
  const auto t = plan(two_row_blocks(), needs);
  ASSERT_EQ(t.size(), 2u);  // rows 2-3 once for three tiles, row 0 for tile 8
  expect_endpoint(t[0].source, 1, 11, 0);
  EXPECT_EQ(t[0].bytes, 2 * kRowBytes);
  ASSERT_EQ(t[0].destinations.size(), 3u);
  expect_endpoint(t[0].destinations[0], 5, 20, 0);
  expect_endpoint(t[0].destinations[1], 6, 21, 64);
  expect_endpoint(t[0].destinations[2], 7, 22, 0);
  expect_endpoint(t[1].source, 0, 10, 100);
  ASSERT_EQ(t[1].destinations.size(), 1u);
  EXPECT_EQ(t[1].destinations[0].tile, 8u);
}

TEST(PlanTransfers, UncoveredNeedThrows) {
  // Past the last row, and into a gap left by a missing block.
  EXPECT_THROW(plan(two_row_blocks(), {Need{5, 20, 0, 3, 2, 0, kCols}}), Error);
  Distribution gap = two_row_blocks();
  gap.blocks.pop_back();
  EXPECT_THROW(plan(gap, {Need{5, 20, 0, 1, 2, 0, kCols}}), Error);
}

TEST(ExchangeLoad, MulticastIsSentOnceAndReceivedByEach) {
  const auto t = plan(two_row_blocks(), {Need{2, 20, 0, 2, 2, 0, kCols}, Need{3, 21, 0, 2, 2, 0, kCols},
                                         Need{3, 22, 0, 0, 2, 0, 2}});
  const ExchangeLoad load = exchange_load(t, 4);
  EXPECT_EQ(load.sent_bytes[1], 2 * kRowBytes);  // one multicast of rows 2-3
  EXPECT_EQ(load.sent_runs[1], 1u);
  EXPECT_EQ(load.sent_bytes[0], 2 * 2 * kElement);  // two rows of a 2-column slice
  EXPECT_EQ(load.sent_runs[0], 2u);
  EXPECT_EQ(load.received_bytes[2], 2 * kRowBytes);
  EXPECT_EQ(load.received_runs[2], 1u);
  EXPECT_EQ(load.received_bytes[3], 2 * kRowBytes + 2 * 2 * kElement);
  EXPECT_EQ(load.received_runs[3], 3u);
  EXPECT_EQ(load.sent_bytes[2] + load.sent_bytes[3] + load.received_bytes[0] + load.received_bytes[1], 0u);
}

}  // namespace
}  // namespace tilevit::compiler
