#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "kernel_path_test.hpp"
#include "numerics/fp16.hpp"

using namespace tilevit::numerics;

namespace {
// The bulk conversions run on every kernel path.
using Fp16Bulk = tilevit::numerics::testing::KernelPathTest;
}  // namespace

TEST(Fp16, KnownBits) {
  EXPECT_EQ(fp16_bits(1.0f), 0x3C00);
  EXPECT_EQ(fp16_bits(-2.0f), 0xC000);
  EXPECT_EQ(fp16_bits(65504.0f), 0x7BFF);
  EXPECT_EQ(fp16_bits(1e6f), 0x7C00);  // overflow -> inf
  EXPECT_EQ(fp16_bits(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(fp16_value(0x0001), std::ldexp(1.0f, -24));
}

TEST(Fp16, RoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1.0).
  EXPECT_EQ(round_fp16(1.0f + std::ldexp(1.0f, -11)), 1.0f);
  // 1 + 3*2^-11 is halfway between 1+2^-10 and 1+2^-9: ties to even (1+2^-9).
  EXPECT_EQ(round_fp16(1.0f + 3 * std::ldexp(1.0f, -11)), 1.0f + std::ldexp(1.0f, -9));
  EXPECT_EQ(round_fp16(65519.0f), 65504.0f);  // just under the overflow midpoint
  EXPECT_TRUE(std::isinf(round_fp16(65520.0f)));
}

TEST(Fp16, AllHalfValuesRoundTrip) {
  for (int bits = 0; bits < 65536; ++bits) {
    const float v = fp16_value(static_cast<std::uint16_t>(bits));
    if (std::isnan(v)) continue;
    EXPECT_EQ(fp16_bits(v), bits);
  }
}

TEST_P(Fp16Bulk, MatchesScalar) {
  std::vector<float> v;
  for (int i = 0; i < 1003; ++i) v.push_back(std::sin(i * 0.37f) * std::ldexp(1.0f, (i % 40) - 20));
  auto bulk = v;
  round_fp16(bulk.data(), bulk.size());
  std::vector<std::uint16_t> bits(v.size());
  to_fp16_bits(v.data(), bits.data(), v.size());
  std::vector<float> back(v.size());
  from_fp16_bits(bits.data(), back.data(), v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    EXPECT_EQ(bulk[i], round_fp16(v[i]));
    EXPECT_EQ(back[i], bulk[i]);
  }
}

// The bulk conversions (16 lanes with AVX-512, 8 with AVX2, masked or scalar tails) give
// the scalar conversion's bits for every binary16 pattern and for floats across the whole
// range (NaN, infinities, overflow, subnormals, ties), at every tail length, and write
// nothing beyond `count`.
TEST_P(Fp16Bulk, EqualsScalarBitForBitAtEveryLength) {
  std::vector<std::uint16_t> halves(65536);
  for (std::size_t i = 0; i < halves.size(); ++i) halves[i] = static_cast<std::uint16_t>(i);
  std::vector<float> decoded(halves.size() + 1, -3.0f);
  from_fp16_bits(halves.data(), decoded.data(), halves.size());
  EXPECT_EQ(decoded.back(), -3.0f);
  for (std::size_t i = 0; i < halves.size(); ++i) {
    const float want = fp16_value(halves[i]);
    ASSERT_EQ(0, std::memcmp(&decoded[i], &want, 4)) << "bits " << i;
  }
  std::vector<float> floats;
  for (std::uint32_t b = 0; b < 0xFFFFFFFFu - 40503u; b += 40503u) {  // every part of the float range
    float f;
    std::memcpy(&f, &b, 4);
    floats.push_back(f);
  }
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(7), std::size_t(8), std::size_t(15), std::size_t(16),
                        std::size_t(17), std::size_t(31), std::size_t(33), floats.size()}) {
    std::vector<std::uint16_t> bits(n + 1, 0xBEEF);
    to_fp16_bits(floats.data(), bits.data(), n);
    EXPECT_EQ(bits[n], 0xBEEF) << n;
    std::vector<float> rounded(floats.begin(), floats.begin() + static_cast<std::ptrdiff_t>(n));
    rounded.push_back(-5.0f);
    round_fp16(rounded.data(), n);
    EXPECT_EQ(rounded[n], -5.0f) << n;
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(bits[i], fp16_bits(floats[i])) << "float bits " << i << " of " << n;
      const float want = round_fp16(floats[i]);
      ASSERT_EQ(0, std::memcmp(&rounded[i], &want, 4)) << "float " << i << " of " << n;
    }
    std::vector<float> back(n + 1, -7.0f);
    from_fp16_bits(bits.data(), back.data(), n);
    EXPECT_EQ(back[n], -7.0f) << n;
  }
}

// Strided rows (attention_values' V with rows padded to cache lines): each row converts as
// one from_fp16_bits of it, and the padding between output rows is never written.
TEST_P(Fp16Bulk, RowsEqualPerRowConversionAndKeepThePadding) {
  for (std::size_t cols : {std::size_t(1), std::size_t(8), std::size_t(16), std::size_t(17), std::size_t(72)}) {
    const std::size_t rows = 5, in_stride = cols + 3, out_stride = (cols + 15) / 16 * 16 + 16;
    std::vector<std::uint16_t> in(rows * in_stride);
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::uint16_t>(i * 2654435761u >> 7);
    std::vector<float> out(rows * out_stride, -9.0f);
    from_fp16_bits_rows(in.data(), in_stride, out.data(), out_stride, rows, cols);
    for (std::size_t r = 0; r < rows; ++r) {
      std::vector<float> want(cols);
      from_fp16_bits(in.data() + r * in_stride, want.data(), cols);
      ASSERT_EQ(0, std::memcmp(out.data() + r * out_stride, want.data(), cols * 4)) << cols << " row " << r;
      for (std::size_t c = cols; c < out_stride; ++c) ASSERT_EQ(out[r * out_stride + c], -9.0f) << cols << " row " << r;
    }
  }
}

TILEVIT_TEST_EVERY_KERNEL_PATH(Fp16Bulk);
