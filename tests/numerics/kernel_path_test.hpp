#pragma once
// The parameterised tester of the kernel paths: a test of KernelPathTest runs once per path
// this CPU has (scalar, AVX2, AVX-512), with that path selected, and compares what the
// kernels compute on it with the definitions (the scalar path) bit for bit.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "numerics/fp16.hpp"
#include "numerics/fp8.hpp"
#include "numerics/kernel_path.hpp"

namespace tilevit::numerics {
// Test names and failure messages show the path by name.
inline void PrintTo(KernelPath path, std::ostream* os) { *os << kernel_path_name(path); }
}  // namespace tilevit::numerics

namespace tilevit::numerics::testing {

class KernelPathTest : public ::testing::TestWithParam<KernelPath> {
 private:
  ScopedKernelPath path_{GetParam()};
};

inline std::string path_test_name(const ::testing::TestParamInfo<KernelPath>& info) { return kernel_path_name(info.param); }

// Runs every KernelPathTest of `suite` (a subclass) on every available path.
#define TILEVIT_TEST_EVERY_KERNEL_PATH(suite)                                                                        \
  INSTANTIATE_TEST_SUITE_P(EveryPath, suite, ::testing::ValuesIn(::tilevit::numerics::available_kernel_paths()), \
                           ::tilevit::numerics::testing::path_test_name)

// f() computed by the definitions: on the scalar path, whichever path the test selected.
template <class F>
auto by_definition(F&& f) {
  ScopedKernelPath scalar(KernelPath::scalar);
  return f();
}

// Lengths around every vector width and unroll (8, 16, 32 lanes), odd widths and the
// encoder's 1,152.
inline const std::vector<int> kEdgeSizes = {0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 72, 1152};

// Same bits, or both NaN: which NaN an operation returns is not specified (docs/NUMERICS.md).
inline bool same_bits(float x, float y) {
  return std::bit_cast<std::uint32_t>(x) == std::bit_cast<std::uint32_t>(y) || (std::isnan(x) && std::isnan(y));
}
inline bool same_bits(std::uint16_t x, std::uint16_t y) {
  return x == y || (std::isnan(fp16_value(x)) && std::isnan(fp16_value(y)));
}

// The first element where got and want differ, or "" when they agree.
template <class T>
std::string first_difference(const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size()) return "size " + std::to_string(got.size()) + " vs " + std::to_string(want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!same_bits(got[i], want[i]))
      return "at " + std::to_string(i) + ": " + std::to_string(got[i]) + " vs " + std::to_string(want[i]);
  return "";
}

#define EXPECT_SAME_BITS(got, want) EXPECT_EQ(::tilevit::numerics::testing::first_difference(got, want), "")

// FP8 (F143) values at scale -1, as GEMM operands hold them.
inline std::vector<float> random_fp8(std::size_t n, std::mt19937& rng) {
  std::normal_distribution<float> dist(0.0f, 0.5f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  fp8_round(v.data(), n, Fp8Format::F143, -1);
  return v;
}

// FP16 values around 0 with spread `sigma`.
inline std::vector<float> random_fp16(std::size_t n, std::mt19937& rng, float sigma = 1.0f) {
  std::normal_distribution<float> dist(0.0f, sigma);
  std::vector<float> v(n);
  for (auto& x : v) x = round_fp16(dist(rng));
  return v;
}

// Special values written over the start of v: signed zeros, infinities, a NaN, the
// largest and a subnormal FP16 value.
inline std::vector<float> with_specials(std::vector<float> v) {
  const float specials[] = {-0.0f, 0.0f, INFINITY, -INFINITY, NAN, 65504.0f, fp16_value(0x0001)};
  for (std::size_t i = 0; i < v.size() && i < std::size(specials); ++i) v[i] = specials[i];
  return v;
}
inline std::vector<float> random_fp16_with_specials(std::size_t n, std::mt19937& rng, float sigma = 1.0f) {
  return with_specials(random_fp16(n, rng, sigma));
}

// `terms` x `count` FP16 values, term t of element i at [t * count + i], whose sums over
// the terms depend on the order of the adds even after rounding to FP16: the even terms
// are a large value and its negation in turn (they cancel), the odd ones small values.
inline std::vector<float> cancelling_terms(int terms, std::size_t count, std::mt19937& rng) {
  const auto small = random_fp16(terms * count, rng);
  std::uniform_real_distribution<float> significand(1.0f, 2.0f);
  std::vector<float> large(count);
  for (auto& x : large) x = round_fp16(std::ldexp(significand(rng), 12 + static_cast<int>(rng() % 4)) * (rng() % 2 ? 1.0f : -1.0f));
  std::vector<float> v(terms * count);
  for (int t = 0; t < terms; ++t)
    for (std::size_t i = 0; i < count; ++i) v[t * count + i] = t % 2 ? small[t * count + i] : t % 4 ? -large[i] : large[i];
  return v;
}

inline std::vector<std::uint16_t> fp16_bits_of(const std::vector<float>& v) {
  std::vector<std::uint16_t> bits(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) bits[i] = fp16_bits(v[i]);
  return bits;
}

}  // namespace tilevit::numerics::testing
