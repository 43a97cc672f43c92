#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <array>
#include <random>
#include <set>

#include "numerics/fp16.hpp"
#include "numerics/fp8.hpp"
#include "support/error.hpp"

using namespace tilevit::numerics;

namespace {
// Independent decoder straight from the format definition (WORKLOAD.md).
double decode_by_definition(int code, int bias, int m_bits) {
  const int e = (code & 0x7F) >> m_bits, m = code & ((1 << m_bits) - 1);
  const double mag = e == 0 ? m * std::pow(2.0, 1 - bias - m_bits) : (1 + m / double(1 << m_bits)) * std::pow(2.0, e - bias);
  return (code & 0x80) ? -mag : mag;
}
}  // namespace

TEST(Fp8, F143KnownValues) {
  EXPECT_EQ(fp8_decode(0x7F, Fp8Format::F143, 0), 240.0f);
  EXPECT_EQ(fp8_decode(0xFF, Fp8Format::F143, 0), -240.0f);
  EXPECT_EQ(fp8_decode(0x08, Fp8Format::F143, 0), std::ldexp(1.0f, -7));   // min normal
  EXPECT_EQ(fp8_decode(0x01, Fp8Format::F143, 0), std::ldexp(1.0f, -10));  // min subnormal
  EXPECT_EQ(fp8_decode(0x40, Fp8Format::F143, 0), 1.0f);
  EXPECT_TRUE(std::isnan(fp8_decode(0x80, Fp8Format::F143, 0)));
  EXPECT_EQ(fp8_decode(0x00, Fp8Format::F143, 0), 0.0f);
  EXPECT_EQ(fp8_decode(0x7F, Fp8Format::F152, 0), 57344.0f);
  EXPECT_EQ(fp8_decode(0x40, Fp8Format::F152, 0), 1.0f);
}

TEST(Fp8, AllCodesDecodeAndRoundTrip) {
  for (auto format : {Fp8Format::F143, Fp8Format::F152}) {
    const Fp8Spec spec = fp8_spec(format);
    std::set<float> values;
    for (int code = 0; code < 256; ++code) {
      const float v = fp8_decode(static_cast<std::uint8_t>(code), format, 0);
      if (code == 0x80) {
        EXPECT_TRUE(std::isnan(v));
        continue;
      }
      EXPECT_EQ(v, decode_by_definition(code, spec.exponent_bias, spec.mantissa_bits)) << "code " << code;
      EXPECT_EQ(fp8_encode(v, format, 0), code) << fp8_name(format) << " code " << code;
      values.insert(v);
    }
    EXPECT_EQ(values.size(), 255u);  // every code but NaN is a distinct value
  }
}

TEST(Fp8, RoundsToNearestEven) {
  // Between 1.0 (0x40) and 1.125 (0x41): the midpoint goes to the even code 0x40.
  EXPECT_EQ(fp8_encode(1.0625f, Fp8Format::F143, 0), 0x40);
  EXPECT_EQ(fp8_encode(1.0626f, Fp8Format::F143, 0), 0x41);
  // Between 1.125 (0x41) and 1.25 (0x42): midpoint to even 0x42.
  EXPECT_EQ(fp8_encode(1.1875f, Fp8Format::F143, 0), 0x42);
  // Subnormal midpoint 1.5 * 2^-10 -> 2 * 2^-10 (even), 0.5 * 2^-10 -> 0.
  EXPECT_EQ(fp8_encode(std::ldexp(1.5f, -10), Fp8Format::F143, 0), 0x02);
  EXPECT_EQ(fp8_encode(std::ldexp(0.5f, -10), Fp8Format::F143, 0), 0x00);
  // Rounding up out of the subnormal range gives the minimum normal.
  EXPECT_EQ(fp8_encode(std::ldexp(7.6f, -10), Fp8Format::F143, 0), 0x08);
  // Carry into the next binade: 1.9375 (midpoint of 1.875 and 2) -> 2.0 (even mantissa 0).
  EXPECT_EQ(fp8_decode(fp8_encode(1.9375f, Fp8Format::F143, 0), Fp8Format::F143, 0), 2.0f);
}

// Brute force: the nearest finite code, ties to the even code, saturating above max.
static int nearest_code_by_search(float x, const std::array<float, 256>& table, float max_value) {
  if (x >= max_value) return 0x7F;
  if (x <= -max_value) return 0xFF;
  int best = 0;
  double best_distance = INFINITY;
  for (int c = 0; c < 256; ++c) {
    if (c == 0x80) continue;
    const double d = std::fabs(double(table[c]) - x);
    if (d < best_distance || (d == best_distance && (c & 1) == 0 && (best & 1) == 1)) {
      best = c;
      best_distance = d;
    }
  }
  return table[best] == 0 ? 0x00 : best;
}

TEST(Fp8, EncodeIsNearestEvenForManyValues) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> exponent(-16, 18);
  std::uniform_real_distribution<float> mantissa(-2.0f, 2.0f);
  for (auto format : {Fp8Format::F143, Fp8Format::F152}) {
    for (int scale : {0, -4, 3}) {
      const auto table = fp8_decode_table(format, scale);
      const float max_value = std::ldexp(fp8_spec(format).max_value, scale);
      for (int i = 0; i < 20000; ++i) {
        float x = std::ldexp(mantissa(rng), exponent(rng) + scale);
        if (i % 4 == 0) {  // exact midpoints between neighbouring codes
          const int c = 1 + static_cast<int>(rng() % 126);
          x = 0.5f * (table[c] + table[c + 1]) * ((i % 8 == 0) ? -1.0f : 1.0f);
        }
        ASSERT_EQ(fp8_encode(x, format, scale), nearest_code_by_search(x, table, max_value))
            << fp8_name(format) << " scale " << scale << " x " << x;
      }
    }
  }
}

TEST(Fp8, SaturatesAndMapsSpecials) {
  EXPECT_EQ(fp8_encode(1e9f, Fp8Format::F143, 0), 0x7F);
  EXPECT_EQ(fp8_encode(-1e9f, Fp8Format::F143, 0), 0xFF);
  EXPECT_EQ(fp8_encode(INFINITY, Fp8Format::F143, 0), 0x7F);
  EXPECT_EQ(fp8_encode(-INFINITY, Fp8Format::F152, 0), 0xFF);
  EXPECT_EQ(fp8_encode(NAN, Fp8Format::F143, 0), 0x80);
  EXPECT_EQ(fp8_encode(-0.0f, Fp8Format::F143, 0), 0x00);         // no negative zero
  EXPECT_EQ(fp8_encode(-1e-30f, Fp8Format::F143, 0), 0x00);       // negative underflow -> +0
  EXPECT_EQ(fp8_encode(245.0f, Fp8Format::F143, 0), 0x7F);        // above max, below max+ulp/2
}

TEST(Fp8, PowerOfTwoScale) {
  // value = code x 2^S: with S = -4, 15 is representable (WORKLOAD.md: |x| <= 15).
  EXPECT_EQ(fp8_decode(0x7F, Fp8Format::F143, -4), 15.0f);
  EXPECT_EQ(fp8_encode(15.0f, Fp8Format::F143, -4), 0x7F);
  EXPECT_EQ(fp8_encode(100.0f, Fp8Format::F143, -4), 0x7F);
  for (int s = kMinFp8Scale; s <= kMaxFp8Scale; ++s)
    for (int code = 1; code < 128; code += 7)
      EXPECT_EQ(fp8_decode(code, Fp8Format::F143, s), std::ldexp(fp8_decode(code, Fp8Format::F143, 0), s));
  EXPECT_THROW(fp8_encode(1.0f, Fp8Format::F143, 32), tilevit::Error);
  EXPECT_THROW(fp8_decode(1, Fp8Format::F143, -32), tilevit::Error);
}

TEST(Fp8, RoundInPlaceMatchesEncodeDecode) {
  std::vector<float> v = {0.0f, 0.3f, -2.7f, 1000.0f, 1e-6f, -0.011f};
  auto expected = v;
  for (auto& x : expected) x = fp8_decode(fp8_encode(x, Fp8Format::F143, -2), Fp8Format::F143, -2);
  fp8_round(v.data(), v.size(), Fp8Format::F143, -2);
  EXPECT_EQ(v, expected);
}

// The bulk decoder (F16C path for F143, table for F152) gives exactly fp8_decode's bits,
// NaN included, for every code, scale, and a tail shorter than a vector.
TEST(Fp8, BulkDecodeMatchesScalarBitForBit) {
  for (std::size_t n : {256 + 5, 256 + 13, 256 + 29})  // tails after the 32-wide blocks: scalar; 8-wide + scalar; 3 x 8 + scalar
  for (auto format : {Fp8Format::F143, Fp8Format::F152})
    for (int s = kMinFp8Scale; s <= kMaxFp8Scale; ++s) {
      std::vector<std::uint8_t> codes(n);
      for (std::size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<std::uint8_t>(i * 37 + 11);
      std::vector<float> got(codes.size());
      fp8_decode(codes.data(), got.data(), codes.size(), format, s);
      for (std::size_t i = 0; i < codes.size(); ++i) {
        const float want = fp8_decode(codes[i], format, s);
        std::uint32_t a, b;
        std::memcpy(&a, &got[i], 4);
        std::memcpy(&b, &want, 4);
        ASSERT_EQ(a, b) << fp8_name(format) << " scale " << s << " code " << int(codes[i]);
      }
    }
}

// The bulk encoder (16 or 8 lanes at a time) gives exactly the scalar encoder's codes: specials,
// ties, subnormals, saturation, both formats, every scale, and a tail.
TEST(Fp8, BulkEncodeMatchesScalar) {
  std::mt19937 rng(7);
  std::vector<float> v = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 1e30f, -1e30f, 1e-30f, -1e-30f};
  for (int e = -45; e <= 45; ++e)
    for (int m = 0; m < 32; ++m) {
      const float x = std::ldexp(1.0f + m / 32.0f, e);  // includes exact ties of 3- and 2-bit mantissas
      v.push_back(x);
      v.push_back(-x);
    }
  std::normal_distribution<float> dist(0.0f, 3.0f);
  for (int i = 0; i < 4000; ++i) v.push_back(dist(rng));
  for (std::uint32_t h = 0; h < 65536; h += 7) v.push_back(fp16_value(static_cast<std::uint16_t>(h)));  // binary16 inputs
  v.push_back(0.5f);  // a tail shorter than a vector
  // Whole arrays run 16 lanes at a time where the CPU has AVX-512, and over 65,536 values
  // in parallel pieces; pieces of 8 values run the 8-lane form on any CPU: all checked.
  std::vector<float> big;
  while (big.size() <= 70000) big.insert(big.end(), v.begin(), v.end());
  for (auto format : {Fp8Format::F143, Fp8Format::F152})
    for (int s = kMinFp8Scale; s <= kMaxFp8Scale; ++s)
      for (const std::size_t piece : {std::size_t(0), std::size_t(8)})
        for (const auto* in : {&v, &big}) {
          if (piece > 0 && in == &big) continue;
          std::vector<std::uint8_t> got(in->size());
          const std::size_t step = piece > 0 ? piece : in->size();
          for (std::size_t i = 0; i < in->size(); i += step)
            fp8_encode(in->data() + i, got.data() + i, std::min(step, in->size() - i), format, s);
          for (std::size_t i = 0; i < in->size(); ++i)
            ASSERT_EQ(got[i], fp8_encode((*in)[i], format, s)) << fp8_name(format) << " scale " << s << " x " << (*in)[i];
        }
}
