// How close the exchange scheduler packs simple phases to their floors (exchange_bounds.hpp)
// on the 16-tile test machine (4 rows of 4): an all-to-all, a multicast, a gather, a
// phase of many small pieces; every schedule accepted by the verifier, and the same
// phase scheduled twice gives the same schedule.
#include <gtest/gtest.h>

#include "compiler/exchange_bounds.hpp"
#include "compiler/exchange_schedule.hpp"
#include "compiler/verify_schedule.hpp"
#include "exchange_phase.hpp"
#include "target/machine.hpp"

using namespace tilevit;
using compiler::Endpoint;
using compiler::Transfer;
using test_support::m;
using test_support::one_phase;
using test_support::piece;
using test_support::schedule_violations;

namespace {

// Every tile of `tiles` sends `words` to every other, each sender to its own slot.
std::vector<Transfer> all_to_all(std::uint32_t tiles, std::uint32_t words) {
  std::vector<Transfer> x;
  for (std::uint32_t from = 0; from < tiles; ++from)
    for (std::uint32_t to = 0; to < tiles; ++to)
      if (to != from) x.push_back(piece(from, words, {to}, from * words * 4));
  return x;
}

double ratio_to_floor(const compiler::CompiledProgram& p) {
  return double(p.steps[0].exchange_cycles) / double(compiler::exchange_bounds(m(), p.steps[0]).floor());
}

}  // namespace

TEST(ExchangePacking, BoundsCountWordsAndUnavoidableControl) {
  const auto p = one_phase(all_to_all(4, 512));
  const auto b = compiler::exchange_bounds(m(), p.steps[0]);
  EXPECT_EQ(b.receive_floor, 3u * 512);
  EXPECT_EQ(b.send_floor, 3u * 512);
  // Row 0: transit 52, then three senders, two source selects between them.
  EXPECT_EQ(b.rule_bound, 52u + 3 * 512 + 2 * m().source_switch_cycles);
  EXPECT_GE(p.steps[0].exchange_cycles, b.rule_bound);
}

TEST(ExchangePacking, AllToAllAmongFourTilesReachesItsFloor) {
  // Three rounds of a permutation: 1,536 words in, two selects and the transit over it.
  const auto p = one_phase(all_to_all(4, 512));
  EXPECT_TRUE(schedule_violations(p).empty());
  EXPECT_LE(ratio_to_floor(p), 1.08);
  EXPECT_EQ(p.steps[0].exchange_cycles, compiler::exchange_bounds(m(), p.steps[0]).rule_bound);
}

TEST(ExchangePacking, AllToAllAmongSixteenTilesStaysNearItsFloor) {
  // Fifteen rounds of a permutation (the edge-coloured order): the bound exactly.
  const auto p = one_phase(all_to_all(16, 256));
  EXPECT_TRUE(schedule_violations(p).empty());
  EXPECT_LE(ratio_to_floor(p), 1.15);
  EXPECT_EQ(p.steps[0].exchange_cycles, compiler::exchange_bounds(m(), p.steps[0]).rule_bound);
}

TEST(ExchangePacking, MulticastRunsBackToBack) {
  // Four 1,000-word pieces, each continuing the previous one on all fifteen receivers.
  std::vector<Transfer> x;
  std::vector<std::uint32_t> all;
  for (std::uint32_t t = 1; t < 16; ++t) all.push_back(t);
  for (std::uint32_t k = 0; k < 4; ++k) x.push_back(piece(0, 1000, all, k * 4000));
  const auto p = one_phase(x);
  EXPECT_TRUE(schedule_violations(p).empty());
  EXPECT_EQ(p.steps[0].exchange_cycles, m().transit_cycles(15) + 4000);
}

TEST(ExchangePacking, GatherPaysOneSelectPerSender) {
  std::vector<Transfer> x;
  for (std::uint32_t from = 1; from < 16; ++from) x.push_back(piece(from, 256, {0}, from * 1024));
  const auto p = one_phase(x);
  EXPECT_TRUE(schedule_violations(p).empty());
  EXPECT_EQ(p.steps[0].exchange_cycles, 52u + 15 * 256 + 14 * m().source_switch_cycles);
  EXPECT_LE(ratio_to_floor(p), 1.12);
}

TEST(ExchangePacking, MulticastsSharingReceiversRunOneAfterAnother) {
  // Four senders, each multicasting 16 pieces of 64 words (a pointer move between them)
  // to a window of eight of the receivers 4..15; every two windows overlap, so the four
  // runs go one after another, and the receivers must be lined up for each piece at once.
  std::vector<Transfer> x;
  for (std::uint32_t from = 0; from < 4; ++from) {
    std::vector<std::uint32_t> to;
    for (std::uint32_t k = 0; k < 8; ++k) to.push_back(4 + (from * 3 + k) % 12);
    for (std::uint32_t k = 0; k < 16; ++k) x.push_back(piece(from, 64, to, from * 8192 + k * 512));
  }
  const auto p = one_phase(x);
  EXPECT_TRUE(schedule_violations(p).empty());
  const std::uint32_t run = 16 * 64 + 15 * m().pointer_switch_cycles;
  EXPECT_LE(p.steps[0].exchange_cycles, m().transit_cycles(15) + 4 * run + 3 * m().source_switch_cycles);
  EXPECT_GE(p.steps[0].exchange_cycles, m().transit_cycles(4) + 4 * run + 3 * m().source_switch_cycles);
}

TEST(ExchangePacking, SchedulingIsDeterministic) {
  auto x = all_to_all(16, 40);
  for (std::uint32_t from = 1; from < 16; ++from) x.push_back(piece(from, 12, {0, 5, 9}, 60000 + from * 48));
  const auto a = one_phase(x), b = one_phase(x);
  ASSERT_EQ(a.steps[0].exchange.size(), b.steps[0].exchange.size());
  for (std::size_t i = 0; i < a.steps[0].exchange.size(); ++i) {
    EXPECT_EQ(a.steps[0].exchange[i].send_cycle, b.steps[0].exchange[i].send_cycle);
    EXPECT_EQ(a.steps[0].exchange[i].land_cycle, b.steps[0].exchange[i].land_cycle);
  }
  EXPECT_EQ(a.steps[0].selects, b.steps[0].selects);
  EXPECT_EQ(a.steps[0].exchange_cycles, b.steps[0].exchange_cycles);
  EXPECT_TRUE(schedule_violations(a).empty());
}

TEST(ExchangePacking, RowAndColumnMulticastsOfAGrid) {
  // The operand broadcast of a GEMM on a 4 x 4 grid of tiles: each tile multicasts eight
  // 32-word pieces of its block to the other three of its row and eight to the other three
  // of its column; every tile takes pieces from six senders, lined up with two others.
  std::vector<Transfer> x;
  for (std::uint32_t from = 0; from < 16; ++from) {
    std::vector<std::uint32_t> row, column;
    for (std::uint32_t k = 0; k < 4; ++k) {
      if (from / 4 * 4 + k != from) row.push_back(from / 4 * 4 + k);
      if (from % 4 + 4 * k != from) column.push_back(from % 4 + 4 * k);
    }
    for (std::uint32_t k = 0; k < 8; ++k) {
      x.push_back(piece(from, 32, row, from * 2048 + k * 256));
      x.push_back(piece(from, 32, column, 65536 + from * 2048 + k * 256));
    }
  }
  const auto p = one_phase(x);
  EXPECT_TRUE(schedule_violations(p).empty());
  // Two senders of one row share two receivers, so a row's four runs of 8 x 32 words go
  // one after another, and so do a column's; a tile cannot take a column piece while its
  // row peers send, so the best is about a row phase then a column phase.
  const std::uint32_t run = 8 * 32 + 7 * m().pointer_switch_cycles;
  const std::uint32_t serial = m().transit_cycles(15) + 2 * (4 * run + 3 * m().source_switch_cycles);
  EXPECT_GE(p.steps[0].exchange_cycles, compiler::exchange_bounds(m(), p.steps[0]).rule_bound);
  EXPECT_LE(double(p.steps[0].exchange_cycles), 1.15 * serial);  // append-only: 1.51x; without rounds of multicasts 1.26x
}
