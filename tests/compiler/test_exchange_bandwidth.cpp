// The exchange at the machine's bytes per cycle: one rule (MachineDescription::exchange_cycles)
// paces the schedule, its verifier and its bounds. test16 at 4 B/cycle (the C600's one
// word) against the same machine at 8 B/cycle.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/exchange_bounds.hpp"
#include "exchange_phase.hpp"
#include "small_model.hpp"

using namespace tilevit;
using compiler::Transfer;
using test_support::m;
using test_support::one_phase;
using test_support::piece;
using test_support::schedule_violations;
using test_support::test16_at;

namespace {

// Every tile of row 0 (tiles 0-3) sends `words` to each of the others.
std::vector<Transfer> all_to_all(std::uint32_t words) {
  std::vector<Transfer> x;
  for (std::uint32_t from = 0; from < 4; ++from)
    for (std::uint32_t to = 0; to < 4; ++to)
      if (to != from) x.push_back(piece(from, words, {to}, from * words * 4));
  return x;
}

bool names(const std::vector<std::string>& violations, const std::string& what, std::uint32_t tile, std::uint64_t cycle) {
  for (const std::string& v : violations)
    if (v.find(what) != std::string::npos && v.find("tile " + std::to_string(tile) + ",") != std::string::npos &&
        v.find("cycle " + std::to_string(cycle)) != std::string::npos)
      return true;
  return false;
}

}  // namespace

TEST(ExchangeBandwidth, APieceOccupiesItsBytesAtTheSlowerRate) {
  EXPECT_EQ(m().exchange_cycles(8 * 64), 128u);  // test16, like the C600: one word per cycle
  const auto fast = test16_at(8);
  EXPECT_EQ(fast.exchange_cycles(40), 5u);
  EXPECT_EQ(fast.exchange_cycles(12), 2u);  // a part-filled last cycle is still a cycle
  auto receive_bound = fast;
  receive_bound.exchange_receive_bytes_per_cycle = 4;  // lands as fast as the receivers take it
  EXPECT_EQ(receive_bound.exchange_cycles(40), 10u);
  const Transfer t = piece(0, 10, {1});
  EXPECT_EQ(compiler::occupancy_cycles(fast, t), 5u);
  EXPECT_EQ(compiler::occupancy_cycles(m(), t), 10u);
}

// The payload halves; transit (52) and the receivers' selects (27 each) do not.
TEST(ExchangeBandwidth, EightBytesPerCycleSchedulesAPhaseInAboutHalfTheCycles) {
  const auto fast = test16_at(8);
  const auto at4 = one_phase(all_to_all(1000)), at8 = one_phase(all_to_all(1000), fast);
  const std::uint32_t slow_cycles = at4.steps[0].exchange_cycles, fast_cycles = at8.steps[0].exchange_cycles;
  EXPECT_GT(fast_cycles * 2, slow_cycles);
  EXPECT_LT(fast_cycles * 100, slow_cycles * 55) << fast_cycles << " at 8 B/cycle, " << slow_cycles << " at 4";
  for (const Transfer& t : at8.steps[0].exchange) EXPECT_EQ(compiler::land_end(fast, t) - t.land_cycle, 500u);
  EXPECT_TRUE(schedule_violations(at4).empty());
  EXPECT_TRUE(schedule_violations(at8, fast).empty());
  // The floors and the rule bound are in cycles at the machine's rate.
  const auto b4 = compiler::exchange_bounds(m(), at4.steps[0]), b8 = compiler::exchange_bounds(fast, at8.steps[0]);
  EXPECT_EQ(b4.receive_floor, 3000u);
  EXPECT_EQ(b8.receive_floor, 1500u);
  EXPECT_EQ(b8.send_floor, 1500u);
  EXPECT_EQ(b4.rule_bound - b8.rule_bound, 1500u);
  EXPECT_GE(fast_cycles, b8.rule_bound);
}

TEST(ExchangeBandwidth, VerifierChecksReceiveSlotsInCycles) {
  const auto fast = test16_at(8);
  // One sender's next bytes into tile 5 follow back to back: 50 cycles each at 8 B/cycle.
  const auto run = one_phase({piece(2, 100, {5}, 0), piece(2, 100, {5}, 400)}, fast);
  const auto& y = run.steps[0].exchange;
  EXPECT_EQ(y[1].land_cycle, y[0].land_cycle + 50u);
  EXPECT_TRUE(schedule_violations(run, fast).empty());
  // Read at 4 B/cycle the same landings last 100 cycles and overlap.
  EXPECT_TRUE(names(schedule_violations(run, m()), "receive slots overlap", 5, y[1].land_cycle));

  // Two senders into tile 5; the second planted one cycle inside the first's landing.
  auto p = one_phase({piece(0, 100, {5}), piece(1, 100, {5}, 400)}, fast);
  Transfer &a = p.steps[0].exchange[0], &b = p.steps[0].exchange[1];
  Transfer& later = a.land_cycle < b.land_cycle ? b : a;
  const Transfer& earlier = a.land_cycle < b.land_cycle ? a : b;
  const auto move_to = [&](std::uint64_t cycle) {
    const std::uint32_t transit = later.land_cycle - later.send_cycle;
    later.land_cycle = static_cast<std::uint32_t>(cycle), later.send_cycle = later.land_cycle - transit;
  };
  const std::uint64_t end = compiler::land_end(fast, earlier);
  move_to(end - 1);
  EXPECT_TRUE(names(schedule_violations(p, fast), "receive slots overlap", 5, end - 1));
  // Landing right at its end does not overlap (at one word per cycle it would).
  move_to(end);
  for (const std::string& v : schedule_violations(p, fast)) EXPECT_EQ(v.find("receive slots overlap"), std::string::npos) << v;
}

// The whole small model compiled for 8 B/cycle: its schedule passes the verifier at that
// rate and its exchange takes fewer cycles than at 4 B/cycle.
TEST(ExchangeBandwidth, SmallModelAtEightBytesPerCycle) {
  const auto fast = test16_at(8);
  model::ViTConfig c = model::ViTConfig::small();
  c.layers = 2;
  const auto graph = compiler::build_vit_graph(c, model::NumericsConfig::uniform(-4));
  const auto at8 = compiler::compile_model(graph, fast, {}), at4 = test_support::compile_small();
  const auto& p = at8.executable.program;
  EXPECT_TRUE(compiler::verify_program(fast, p, at8.executable.bindings, at8.executable.tensors).ok());
  std::uint64_t cycles8 = 0, cycles4 = 0;
  for (const auto& s : p.steps) cycles8 += s.exchange_cycles;
  for (const auto& s : at4.executable.program.steps) cycles4 += s.exchange_cycles;
  EXPECT_LT(cycles8, cycles4);
}
