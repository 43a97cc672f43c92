// The cycle-level exchange schedule: its rules on hand-built phases of the 16-tile test
// machine (4 rows of 4), the small model's schedule, and the verifier's check of it
// (each planted fault named by tile and cycle).
#include <gtest/gtest.h>

#include <algorithm>

#include "compiler/exchange_schedule.hpp"
#include "compiler/exchange_waves.hpp"
#include "compiler/verify_schedule.hpp"
#include "exchange_phase.hpp"
#include "small_model.hpp"

using namespace tilevit;
using compiler::Endpoint;
using compiler::Transfer;
using test_support::m;
using test_support::one_phase;
using test_support::piece;
using test_support::schedule_violations;

TEST(ExchangeSchedule, TransitFollowsTheFarthestReceiversRow) {
  EXPECT_EQ(m().transit_cycles(0), 52u);
  EXPECT_EQ(m().transit_cycles(13), 52u + 2 * 3);  // test16: 4 columns, tile 13 in row 3
  // A multicast to rows 0 and 3 lands on both at once, after the farther transit.
  const auto p = one_phase({piece(0, 10, {1, 13})});
  const Transfer& t = p.steps[0].exchange[0];
  EXPECT_EQ(t.send_cycle, 0u);
  EXPECT_EQ(t.land_cycle, 58u);
  EXPECT_EQ(p.steps[0].exchange_cycles, 68u);
  EXPECT_TRUE(schedule_violations(p).empty());
}

TEST(ExchangeSchedule, ReceiverSwitchesCostTheMeasuredCycles) {
  // Two senders into tile 5: the second lands a source switch (27) after the first ends.
  auto p = one_phase({piece(0, 20, {5}), piece(1, 20, {5}, 80)});
  const auto& x = p.steps[0].exchange;
  const Transfer& first = x[0].source.tile == 0 ? x[0] : x[1];
  const Transfer& second = x[0].source.tile == 0 ? x[1] : x[0];
  const auto first_end = static_cast<std::uint32_t>(compiler::land_end(m(), first));
  EXPECT_EQ(second.land_cycle, first_end + m().source_switch_cycles);
  ASSERT_EQ(p.steps[0].selects.size(), 2u);
  EXPECT_EQ(p.steps[0].selects[1], (compiler::SelectEvent{5, first_end + 27, second.source.tile}));
  // One sender, next bytes: back to back; a gap in the destination: a pointer write (13).
  p = one_phase({piece(2, 8, {6}, 0), piece(2, 8, {6}, 32), piece(2, 8, {6}, 100)});
  const auto& y = p.steps[0].exchange;
  EXPECT_EQ(y[1].land_cycle, compiler::land_end(m(), y[0]));
  EXPECT_EQ(y[2].land_cycle, compiler::land_end(m(), y[1]) + m().pointer_switch_cycles);
  EXPECT_EQ(p.steps[0].selects.size(), 2u);  // the first select, then the pointer move
  EXPECT_TRUE(schedule_violations(p).empty());
}

TEST(ExchangeSchedule, WavesAreSectionsJoinedAtTheMeasuredCost) {
  auto a = piece(0, 10, {1}), b = piece(2, 10, {3});
  b.wave = 1;
  compiler::CompiledProgram p;
  p.steps.push_back(compiler::Superstep{.label = "x", .exchange = {a, b}, .waves = 2});
  compiler::schedule_exchange(p, m());
  EXPECT_EQ(p.steps[0].exchange[1].send_cycle, compiler::land_end(m(), p.steps[0].exchange[0]) + m().section_join_cycles);
  EXPECT_TRUE(schedule_violations(p).empty());
}

TEST(ExchangeSchedule, PiecesAreCutAtTheLongestTransfer) {
  compiler::CompiledProgram p;
  p.steps.push_back(compiler::Superstep{.label = "x", .exchange = {piece(0, 5000, {1})}});
  compiler::schedule_exchange_waves(p, 16, 1u << 20, m().max_transfer_words);
  ASSERT_EQ(p.steps[0].exchange.size(), 2u);
  EXPECT_EQ(p.steps[0].exchange[0].words(), 4148u);
  EXPECT_EQ(p.steps[0].exchange[1].words(), 5000u - 4148u);
}

TEST(ExchangeSchedule, LoopbacksBecomeLocalCopies) {
  compiler::CompiledProgram p;
  p.steps.push_back(compiler::Superstep{.label = "x", .exchange = {piece(3, 4, {3, 7}), piece(4, 4, {4})}});
  compiler::split_local_copies(p);
  ASSERT_EQ(p.steps[0].exchange.size(), 1u);
  EXPECT_EQ(p.steps[0].exchange[0].destinations.size(), 1u);
  EXPECT_EQ(p.steps[0].exchange[0].destinations[0].tile, 7u);
  ASSERT_EQ(p.steps[0].local_copies.size(), 2u);
  EXPECT_EQ(p.steps[0].local_copies[1].tile, 4u);
}

// The small model: no loopback, every phase at least its receive floor, and clean.
TEST(ExchangeSchedule, SmallModelScheduleIsAboveItsFloorAndClean) {
  const auto compiled = test_support::compile_small();
  const auto& p = compiled.executable.program;
  std::size_t copies = 0;
  for (const auto& s : p.steps) {
    copies += s.local_copies.size();
    std::vector<std::uint64_t> received(16, 0);
    for (const Transfer& t : s.exchange)
      for (const Endpoint& d : t.destinations) {
        EXPECT_NE(d.tile, t.source.tile);
        received[d.tile] += t.words();
      }
    EXPECT_GE(s.exchange_cycles, *std::max_element(received.begin(), received.end()));
  }
  EXPECT_GT(copies, 0u);
  EXPECT_TRUE(test_support::verify_on_test16(compiled).ok());
}

namespace {

struct Fault {
  std::string name;
  std::function<std::pair<std::uint32_t, std::uint32_t>(compiler::CompiledProgram&)> plant;  // -> tile, cycle named
  std::string expected;
};

// The first step exchanging, and in it the first receiver landing two pieces.
std::pair<compiler::Superstep*, std::uint32_t> busy_receiver(compiler::CompiledProgram& p) {
  for (auto& s : p.steps) {
    std::vector<int> count(16, 0);
    for (const Transfer& t : s.exchange)
      for (const Endpoint& d : t.destinations)
        if (++count[d.tile] == 2) return {&s, d.tile};
  }
  throw std::runtime_error("no receiver takes two pieces in the small model");
}

std::vector<Fault> schedule_faults() {
  using P = compiler::CompiledProgram;
  return {
      {"double-booked receive",
       [](P& p) {
         auto [s, tile] = busy_receiver(p);
         std::vector<Transfer*> in;
         for (Transfer& t : s->exchange)
           for (const Endpoint& d : t.destinations)
             if (d.tile == tile) in.push_back(&t);
         std::sort(in.begin(), in.end(), [](auto* a, auto* b) { return a->land_cycle < b->land_cycle; });
         in[1]->land_cycle = in[0]->land_cycle + 1, in[1]->send_cycle = 0;  // one word in
         return std::make_pair(tile, in[1]->land_cycle);
       },
       "receive slots overlap"},
      {"wrong sender selected",
       [](P& p) {
         auto [s, tile] = busy_receiver(p);
         auto& e = *std::find_if(s->selects.begin(), s->selects.end(), [&](auto& x) { return x.tile == tile; });
         e.source = (e.source + 1) % 16;
         std::uint32_t land = UINT32_MAX;
         for (const Transfer& t : s->exchange)
           for (const Endpoint& d : t.destinations)
             if (d.tile == tile) land = std::min(land, t.land_cycle);
         return std::make_pair(tile, land);
       },
       "lands while the receiver listens to tile"},
      {"transfer over 4,148 words",
       [](P& p) {
         auto [s, tile] = busy_receiver(p);
         Transfer& t = s->exchange.front();
         t.bytes = 4149 * 4;
         return std::make_pair(t.source.tile, t.send_cycle);
       },
       "over the longest 4148"},
      {"pointer outside its allocation",
       [](P& p) {
         auto [s, tile] = busy_receiver(p);
         Transfer& t = s->exchange.front();
         t.destinations.front().offset = p.allocations[t.destinations.front().allocation].request.bytes;
         return std::make_pair(t.destinations.front().tile, t.land_cycle);
       },
       "reaches byte"},
  };
}

}  // namespace

TEST(ExchangeSchedule, EachPlantedFaultNamesTileAndCycle) {
  const auto compiled = test_support::compile_small();
  for (const Fault& f : schedule_faults()) {
    auto broken = compiled;
    const auto [tile, cycle] = f.plant(broken.executable.program);
    const auto report = test_support::verify_on_test16(broken);
    bool found = false;
    const std::string tile_text = "tile " + std::to_string(tile) + ",", cycle_text = "cycle " + std::to_string(cycle);
    for (const auto& v : report.violations)
      found |= v.find(f.expected) != std::string::npos && v.find(tile_text) != std::string::npos &&
               v.find(cycle_text) != std::string::npos;
    EXPECT_TRUE(found) << f.name << ": \"" << f.expected << "\" naming " << tile_text << " " << cycle_text << " not in: "
                       << (report.violations.empty() ? "(none)" : report.violations.front());
  }
}
