#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>

#include "model/random_model.hpp"
#include "numerics/fp16.hpp"
#include "reference/compare.hpp"
#include "reference/forward.hpp"

using namespace tilevit;

namespace {
struct SmallModel {
  model::ViTConfig config = model::ViTConfig::small();
  model::ViTWeights weights;
  reference::ImageBatch images;
  SmallModel(int batch = 2, std::uint64_t seed = 3) {
    config.batch = batch;
    weights = model::load_weights(model::RandomModelSource(config, seed), config);
    for (int b = 0; b < batch; ++b) images.push_back(model::random_image(config, seed, b));
  }
};
}  // namespace

TEST(DeviceNumerics, CloseToFp32OnSmallModel) {
  SmallModel m;
  const auto fp32 = reference::forward_fp32(m.weights, m.images);
  const reference::DeviceNumericsModel device(m.weights, model::NumericsConfig::uniform(-4));
  const auto dev = device.forward(m.images);
  const auto cmp = reference::compare_embeddings(dev, fp32, m.config.width);
  ASSERT_EQ(cmp.cosines.size(), 2u);
  EXPECT_TRUE(cmp.all_finite);
  EXPECT_GT(cmp.min_cosine, 0.99);
  EXPECT_LT(cmp.min_cosine, 1.0);  // the device rounds: it is not the FP32 result
  for (float v : dev) EXPECT_EQ(v, numerics::round_fp16(v));  // embeddings leave the device in FP16
}

TEST(DeviceNumerics, SameBitsWhateverTheThreadCount) {
  SmallModel m;
  const reference::DeviceNumericsModel device(m.weights, model::NumericsConfig::uniform(-4));
  omp_set_num_threads(1);
  const auto one = device.forward(m.images);
  omp_set_num_threads(2);
  const auto two = device.forward(m.images);
  EXPECT_EQ(one, two);
}

TEST(DeviceNumerics, BatchEntriesAreIndependent) {
  SmallModel pair(2);
  const reference::DeviceNumericsModel device(pair.weights, model::NumericsConfig::uniform(-4));
  const auto both = device.forward(pair.images);
  const auto first = device.forward({pair.images[0]});
  ASSERT_EQ(first.size(), static_cast<std::size_t>(pair.config.width));
  EXPECT_TRUE(std::equal(first.begin(), first.end(), both.begin()));
}

TEST(DeviceNumerics, ScaleTooSmallSaturatesAndHurts) {
  // With S = -12 the largest F143 value is 240 * 2^-12 ~ 0.06: activations saturate and
  // the embedding drifts away from FP32. The reference must show it, not hide it.
  SmallModel m;
  const auto fp32 = reference::forward_fp32(m.weights, m.images);
  const auto good = reference::compare_embeddings(
      reference::DeviceNumericsModel(m.weights, model::NumericsConfig::uniform(-4)).forward(m.images), fp32,
      m.config.width);
  const auto bad = reference::compare_embeddings(
      reference::DeviceNumericsModel(m.weights, model::NumericsConfig::uniform(-12)).forward(m.images), fp32,
      m.config.width);
  EXPECT_LT(bad.min_cosine, good.min_cosine - 0.01);
}

TEST(Compare, CosineAndErrors) {
  const std::vector<float> a = {1, 0, 0, 1}, b = {1, 0, 0, 2};
  const auto c = reference::compare_embeddings(a, b, 2);
  EXPECT_DOUBLE_EQ(c.cosines[0], 1.0);
  EXPECT_DOUBLE_EQ(c.cosines[1], 1.0);
  EXPECT_DOUBLE_EQ(c.max_abs_error, 1.0);
  const std::vector<float> nan = {NAN, 0, 0, 1};
  const auto d = reference::compare_embeddings(nan, b, 2);
  EXPECT_FALSE(d.all_finite);
  EXPECT_EQ(d.min_cosine, 0.0);
}
