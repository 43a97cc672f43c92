// The exchange's fast path: whatever the order, merging, chunking and store kind, the
// bytes written are those of the copies run one by one in program order.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>

#include "device/exchange_copies.hpp"

using namespace tilevit::device;

namespace {

constexpr std::uint32_t kSource = 0, kDestination = 1u << 20, kMemory = 2u << 20;

// Copies of multiple-of-4 sizes (the exchange moves words) from the first half of the
// memory into disjoint destination runs of the second half: runs of adjacent pieces at
// every alignment, some longer than the 4 KiB stage, some single words, some sources
// contiguous too (those merge), and a layer stride on some sources.
std::vector<Copy> random_copies(std::mt19937_64& rng, std::uint32_t stride) {
  std::vector<Copy> copies;
  std::uniform_int_distribution<std::uint32_t> words(1, 80), run_pieces(1, 120), gap(0, 40), src(0, 200000);
  std::uint32_t dst = kDestination + 4 * gap(rng);
  while (copies.size() < 6000) {
    const std::uint32_t pieces = run_pieces(rng);
    std::uint32_t s = 4 * src(rng);
    for (std::uint32_t p = 0; p < pieces; ++p) {
      const std::uint32_t bytes = 4 * words(rng);
      if (dst + bytes > kMemory - 4096) return copies;
      copies.push_back(Copy{dst, s, bytes, rng() % 3 == 0 ? stride : 0});
      dst += bytes;
      s = rng() % 2 ? s + bytes : 4 * src(rng);  // contiguous sources sometimes
    }
    dst += 4 * gap(rng);
  }
  return copies;
}

// Tile memory stand-in, 64 B aligned so that alignments in the tests are the ones chosen.
struct Memory {
  struct Free {
    void operator()(std::uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<std::uint8_t[], Free> bytes{static_cast<std::uint8_t*>(std::aligned_alloc(64, kMemory))};
  Memory() = default;
  Memory(const Memory& o) { std::memcpy(bytes.get(), o.bytes.get(), kMemory); }
  std::uint8_t* data() { return bytes.get(); }
};

Memory random_memory(std::mt19937_64& rng) {
  Memory m;
  for (std::uint32_t i = 0; i < kMemory; i += 8) {
    const std::uint64_t w = rng();
    std::memcpy(m.data() + i, &w, 8);
  }
  return m;
}

void expect_same(Memory& want, Memory& got) {
  const std::uint8_t *a = want.data(), *b = got.data();
  for (std::uint32_t i = 0; i < kMemory; ++i)
    if (a[i] != b[i]) FAIL() << "first difference at byte " << i;
}

}  // namespace

TEST(ExchangeCopies, SortedMergedAndChunkedCopiesWriteTheProgramOrderBytes) {
  for (const bool streaming : {false, true}) {
    std::mt19937_64 rng(streaming ? 7 : 8);
    auto copies = random_copies(rng, 4096);
    const auto memory = random_memory(rng);
    for (const std::uint32_t iteration : {0u, 3u}) {
      auto want = memory, got = memory;
      for (const Copy& c : copies)
        std::memcpy(want.data() + c.destination, want.data() + c.source + std::size_t(c.source_stride) * iteration, c.bytes);
      auto shuffled = copies;
      std::shuffle(shuffled.begin(), shuffled.end(), rng);
      const ExchangeCopies plan(shuffled, kMemory, 1, streaming ? 0 : UINT64_MAX);
      EXPECT_EQ(plan.streaming(), streaming);
      EXPECT_LT(plan.copies().size(), copies.size());  // contiguous pieces merged
      EXPECT_GT(plan.chunks(), 10u);
      for (std::size_t c = plan.chunks(); c-- > 0;) plan.run_chunk(got.data(), c, iteration);  // any chunk order
      expect_same(want, got);
    }
  }
}

TEST(ExchangeCopies, EveryRunLengthAndAlignmentStreamsExactly) {
  // One run per case: start alignment 0-60, length 4 B to past two stages, in pieces of
  // one size; every byte outside the run must stay as it was.
  std::mt19937_64 rng(3);
  const auto memory = random_memory(rng);
  for (std::uint32_t lead = 0; lead < 64; lead += 4)
    for (const std::uint32_t length : {4u, 8u, 60u, 64u, 68u, 124u, 128u, 4092u, 4096u, 4100u, 8260u, 9000u})
      for (const std::uint32_t piece : {4u, 52u, 64u, 200u}) {
        std::vector<Copy> copies;
        for (std::uint32_t o = 0; o < length; o += piece)
          copies.push_back(Copy{kDestination + 4096 + lead + o, 1000 + 2 * o, std::min(piece, length - o), 0});
        auto want = memory, got = memory;
        for (const Copy& c : copies) std::memcpy(want.data() + c.destination, want.data() + c.source, c.bytes);
        run_copies(got.data(), copies.data(), copies.size(), 0, true);
        expect_same(want, got);
        if (HasFailure()) FAIL() << "lead " << lead << ", length " << length << ", piece " << piece;
      }
}

TEST(ExchangeCopies, CopiesRunPerDestinationTileInAnyTileOrderWriteTheProgramOrderBytes) {
  // The fused exchange runs each tile's incoming copies just before its kernels, tiles in
  // any order: memory as 16 tiles of 128 KiB, destinations in tiles 8-15.
  constexpr std::uint32_t kTileBytes = kMemory / 16;
  std::mt19937_64 rng(21);
  const auto copies = random_copies(rng, 4096);
  const auto memory = random_memory(rng);
  auto want = memory, got = memory;
  for (const Copy& c : copies)
    std::memcpy(want.data() + c.destination, want.data() + c.source + std::size_t(c.source_stride) * 2, c.bytes);
  auto shuffled = copies;
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  const ExchangeCopies plan(shuffled, kTileBytes, 16);
  for (std::uint32_t t = 0; t < 16; ++t) EXPECT_EQ(plan.receives(t), t >= 8) << "tile " << t;
  EXPECT_FALSE(plan.receives(16));
  for (std::uint32_t t : {13u, 8u, 15u, 3u, 9u, 14u, 10u, 12u, 11u}) plan.run_tile(got.data(), t, 2);
  expect_same(want, got);
}
