#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "numerics/device_kernels.hpp"
#include "numerics/fp16.hpp"

using namespace tilevit::numerics;

namespace {

// FP16-valued inputs of a LayerNorm row: an offset, so the mean matters, and spread.
std::vector<float> row(int width, float offset) {
  std::vector<float> x(width);
  for (int i = 0; i < width; ++i) x[i] = round_fp16(offset + std::sin(0.37f * float(i)) * (1.0f + float(i % 7)));
  return x;
}

}  // namespace

// One part is the whole-row LayerNorm, bit for bit: the split changes rounding only
// through the parts' combination.
TEST(SplitLayerNorm, OnePartIsTheWholeRowLayerNorm) {
  const int width = 144;
  const auto x = row(width, 3.0f), gamma = row(width, 1.0f), beta = row(width, -0.5f);
  std::vector<float> whole(width), split(width);
  device_layernorm_row(x.data(), gamma.data(), beta.data(), whole.data(), width, 1e-6f);
  device_layernorm_split_row(x.data(), gamma.data(), beta.data(), split.data(), width, width, 1e-6f);
  EXPECT_EQ(split, whole);
}

// Parts of 48 and 40 columns (a shorter last part) combine to the row's statistics
// within FP32 rounding, so the outputs are the whole row's within one FP16 step.
TEST(SplitLayerNorm, PartsCombineToTheRowsStatistics) {
  const int width = 136;
  const auto x = row(width, 5.0f), gamma = row(width, 1.0f), beta = row(width, 0.25f);
  std::vector<float> whole(width), split(width);
  device_layernorm_row(x.data(), gamma.data(), beta.data(), whole.data(), width, 1e-6f);
  device_layernorm_split_row(x.data(), gamma.data(), beta.data(), split.data(), width, 48, 1e-6f);
  for (int i = 0; i < width; ++i) EXPECT_NEAR(split[i], whole[i], std::abs(whole[i]) * 2e-3f + 1e-3f) << i;
  // The kernels' own steps give the reference's bits: moments per part, combined, applied.
  float moments[3][2];
  for (int p = 0; p < 3; ++p) device_layernorm_moments(x.data() + 48 * p, p < 2 ? 48 : 40, moments[p]);
  const LayerNormParts s = combine_layernorm_moments(&moments[0][0], 3, 2, width, 48, 1e-6f);
  std::vector<float> applied(width);
  device_layernorm_apply(x.data(), gamma.data(), beta.data(), applied.data(), width, s);
  EXPECT_EQ(applied, split);
}

TEST(SplitLayerNorm, MomentsAreTheMeanAndTheSumOfSquaredDeviations) {
  const float x[4] = {1, 2, 3, 6};
  float m[2];
  device_layernorm_moments(x, 4, m);
  EXPECT_EQ(m[0], 3.0f);
  EXPECT_EQ(m[1], 4.0f + 1.0f + 0.0f + 9.0f);
}
