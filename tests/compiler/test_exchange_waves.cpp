// Exchange waves on hand-made exchange phases: long transfers are cut into pieces of at
// most W words, no tile sends or receives more than W words in a wave, the phase is in
// wave order, every (source, destination) pair still moves the same bytes, and the
// schedule is a function of its input.
#include <gtest/gtest.h>

#include <map>
#include <utility>

#include "compiler/exchange_waves.hpp"
#include "support/error.hpp"

namespace tilevit::compiler {
namespace {

constexpr std::uint32_t kTiles = 6;

Transfer transfer(std::uint32_t from, std::uint32_t bytes, std::vector<std::uint32_t> to) {
  Transfer t;
  t.source = Endpoint{from, 100 + from, 4 * from};
  t.bytes = bytes;
  for (std::uint32_t tile : to) t.destinations.push_back(Endpoint{tile, 200 + tile, 8});
  return t;
}

// A phase where tile 0 feeds everyone (one multicast) and several tiles exchange runs of
// uneven lengths, some sharing senders or receivers.
CompiledProgram crowded_phase() {
  CompiledProgram p;
  p.steps.resize(2);
  p.steps[0].exchange = {transfer(0, 40, {1, 2, 3, 4, 5}), transfer(1, 12, {2}), transfer(2, 28, {1}),
                         transfer(3, 16, {1, 4}),         transfer(4, 4, {5}),  transfer(1, 20, {3}),
                         transfer(5, 8, {0}),             transfer(2, 36, {4, 5})};
  // Step 1 has no exchange at all.
  return p;
}

using PairBytes = std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t>;
PairBytes bytes_per_pair(const Superstep& step) {
  PairBytes out;
  for (const Transfer& t : step.exchange)
    for (const Endpoint& d : t.destinations) out[{t.source.tile, d.tile}] += t.bytes;
  return out;
}

TEST(ExchangeWaves, LongTransfersAreCutIntoPiecesOfAtMostWWords) {
  CompiledProgram p;
  p.steps.resize(1);
  p.steps[0].exchange = {transfer(0, 10 * 4, {1, 2})};
  schedule_exchange_waves(p, 3, 4);
  EXPECT_EQ(p.exchange_stream_words, 4u);
  const auto& pieces = p.steps[0].exchange;
  ASSERT_EQ(pieces.size(), 3u);  // 4 + 4 + 2 words
  const std::uint32_t sizes[] = {16, 16, 8};
  for (std::uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(pieces[i].bytes, sizes[i]);
    EXPECT_EQ(pieces[i].source.offset, 0 + 16 * i);  // each piece starts where the last ended
    ASSERT_EQ(pieces[i].destinations.size(), 2u);
    for (const Endpoint& d : pieces[i].destinations) EXPECT_EQ(d.offset, 8 + 16 * i);
    EXPECT_EQ(pieces[i].wave, i);  // the same sender: one piece per wave
  }
  EXPECT_EQ(p.steps[0].waves, 3u);
}

TEST(ExchangeWaves, NoTileSendsOrReceivesMoreThanWWordsInAWave) {
  for (std::uint32_t words : {1u, 3u, 5u, 16u}) {
    CompiledProgram p = crowded_phase();
    const PairBytes before = bytes_per_pair(p.steps[0]);
    schedule_exchange_waves(p, kTiles, words);
    const Superstep& step = p.steps[0];
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> sent, received;  // (wave, tile)
    std::uint32_t previous_wave = 0;
    for (const Transfer& t : step.exchange) {
      EXPECT_LE(t.bytes, words * 4);
      EXPECT_GE(t.wave, previous_wave) << "not in wave order";
      EXPECT_LT(t.wave, step.waves);
      previous_wave = t.wave;
      sent[{t.wave, t.source.tile}] += t.bytes;
      for (const Endpoint& d : t.destinations) received[{t.wave, d.tile}] += t.bytes;
    }
    for (const auto& [key, bytes] : sent) EXPECT_LE(bytes, words * 4) << "wave " << key.first << " tile " << key.second;
    for (const auto& [key, bytes] : received)
      EXPECT_LE(bytes, words * 4) << "wave " << key.first << " tile " << key.second;
    EXPECT_EQ(bytes_per_pair(step), before) << words << " words";
    EXPECT_TRUE(p.steps[1].exchange.empty());
    EXPECT_EQ(p.steps[1].waves, 0u);
  }
}

TEST(ExchangeWaves, WideWavesKeepTheTransfersWhole) {
  CompiledProgram p = crowded_phase();
  const auto original = p.steps[0].exchange;
  schedule_exchange_waves(p, kTiles, 1024);
  ASSERT_EQ(p.steps[0].exchange.size(), original.size());
  EXPECT_EQ(p.steps[0].waves, 1u);
  for (std::size_t i = 0; i < original.size(); ++i) EXPECT_EQ(p.steps[0].exchange[i].bytes, original[i].bytes);
}

TEST(ExchangeWaves, SameInputSameSchedule) {
  CompiledProgram a = crowded_phase(), b = crowded_phase();
  schedule_exchange_waves(a, kTiles, 3);
  schedule_exchange_waves(b, kTiles, 3);
  ASSERT_EQ(a.steps[0].exchange.size(), b.steps[0].exchange.size());
  EXPECT_EQ(a.steps[0].waves, b.steps[0].waves);
  for (std::size_t i = 0; i < a.steps[0].exchange.size(); ++i) {
    const Transfer &x = a.steps[0].exchange[i], &y = b.steps[0].exchange[i];
    EXPECT_EQ(x.source.tile, y.source.tile);
    EXPECT_EQ(x.source.offset, y.source.offset);
    EXPECT_EQ(x.bytes, y.bytes);
    EXPECT_EQ(x.wave, y.wave);
    EXPECT_EQ(x.destinations.size(), y.destinations.size());
  }
}

TEST(ExchangeWaves, ZeroWordsIsAUsageError) {
  CompiledProgram p = crowded_phase();
  try {
    schedule_exchange_waves(p, kTiles, 0);
    FAIL() << "accepted W = 0";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
  }
}

}  // namespace
}  // namespace tilevit::compiler
