// The family kernels (device_kernels_family.cpp) against their definitions in
// docs/NUMERICS.md and against libm: erf within a few ulp, the activations equal to the
// FP32 formulas rounded once to FP16.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "numerics/device_kernels.hpp"
#include "numerics/device_math.hpp"
#include "numerics/fp16.hpp"

using namespace tilevit::numerics;

namespace {

std::vector<float> inputs() {
  std::vector<float> x;
  for (int i = -4000; i <= 4000; ++i) x.push_back(round_fp16(static_cast<float>(i) * 0.0025f));
  for (float v : {-60000.0f, -20.0f, -9.5f, 0.0f, -0.0f, 9.5f, 20.0f, 60000.0f}) x.push_back(v);
  return x;
}

TEST(DeviceErf, CloseToLibmAndOdd) {
  for (float x : inputs()) {
    const double want = std::erf(static_cast<double>(x));
    EXPECT_NEAR(device_erf(x), want, 4e-7) << x;  // 6 ulp of 1 near the clamp
    EXPECT_EQ(device_erf(-x), -device_erf(x)) << x;
  }
  EXPECT_EQ(device_erf(100.0f), device_erf(4.0f));  // clamped
  EXPECT_FLOAT_EQ(device_erf(4.0f), 1.0f);
}

// The kernel's outputs equal its FP32 definition rounded once, and the exact function
// within FP16 rounding; returns the outputs.
std::vector<float> check_activation(void (*kernel)(const float*, float*, std::size_t), float (*definition)(float),
                                    double (*exact)(double)) {
  const std::vector<float> x = inputs();
  std::vector<float> y(x.size());
  kernel(x.data(), y.data(), x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(y[i], round_fp16(definition(x[i]))) << x[i];
    const double want = exact(x[i]);
    EXPECT_NEAR(y[i], want, 1e-3 * std::max(1.0, std::fabs(want))) << x[i];
  }
  return y;
}

TEST(DeviceGeluErf, IsTheDefinitionRoundedOnce) {
  check_activation(
      device_gelu_erf, [](float v) { return (0.5f * v) * (1.0f + device_erf(v * 0.70710678118654752f)); },
      [](double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); });
}

TEST(DeviceQuickGelu, IsTheDefinitionRoundedOnce) {
  const auto y = check_activation(
      device_quick_gelu, [](float v) { return v / (1.0f + device_exp(-1.702f * v)); },
      [](double v) { return v / (1.0 + std::exp(-1.702 * v)); });
  // Large negative inputs: the exponential is clamped, the result a signed zero.
  EXPECT_EQ(std::fabs(y[y.size() - 8]), 0.0f);
}

TEST(DeviceMultiply, RoundsEachProductOnceAndWorksInPlace) {
  std::vector<float> a{1.5f, -2.0f, 3.0f, 65504.0f, 0.1f};
  const std::vector<float> b{0.5f, 0.75f, -1.0f, 2.0f, 0.3f};
  for (auto& v : a) v = round_fp16(v);
  std::vector<float> out(a.size());
  device_multiply(a.data(), b.data(), out.data(), a.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(out[i], round_fp16(a[i] * b[i]));
  EXPECT_TRUE(std::isinf(out[3]));  // FP16 overflow
  device_multiply(a.data(), b.data(), a.data(), a.size());
  EXPECT_EQ(a, out);
}

}  // namespace
