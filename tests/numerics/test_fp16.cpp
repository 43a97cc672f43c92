#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "numerics/fp16.hpp"

using namespace tilevit::numerics;

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

TEST(Fp16, BulkMatchesScalar) {
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
