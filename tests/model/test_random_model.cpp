#include <gtest/gtest.h>

#include <cmath>

#include "model/patches.hpp"
#include "model/random_model.hpp"

using namespace tilevit;
using model::RandomModelSource;
using model::ViTConfig;

namespace {
std::vector<float> read(const RandomModelSource& s, const std::string& name) {
  std::vector<float> v(static_cast<std::size_t>(s.info(name)->elements()));
  s.read_f32(name, v);
  return v;
}
}  // namespace

TEST(RandomModel, DeterministicPerSeed) {
  const ViTConfig c = ViTConfig::small();
  const std::string name = "vision_model.encoder.layers.1.mlp.fc1.weight";
  EXPECT_EQ(read(RandomModelSource(c, 5), name), read(RandomModelSource(c, 5), name));
  EXPECT_NE(read(RandomModelSource(c, 5), name), read(RandomModelSource(c, 6), name));
  // Different tensors draw from different streams.
  EXPECT_NE(read(RandomModelSource(c, 5), name),
            read(RandomModelSource(c, 5), "vision_model.encoder.layers.0.mlp.fc1.weight"));
}

TEST(RandomModel, LayerIsIndependentOfLayerCount) {
  ViTConfig two = ViTConfig::so400m(), one = ViTConfig::so400m();
  two.layers = 2;
  one.layers = 1;
  const std::string name = "vision_model.encoder.layers.0.self_attn.q_proj.weight";
  EXPECT_EQ(read(RandomModelSource(two, 0), name), read(RandomModelSource(one, 0), name));
  EXPECT_FALSE(RandomModelSource(one, 0).info("vision_model.encoder.layers.1.self_attn.q_proj.weight"));
}

TEST(RandomModel, ScalesFollowTheRecipe) {
  const ViTConfig c = ViTConfig::so400m();
  ViTConfig one = c;
  one.layers = 1;
  const RandomModelSource s(one, 0);
  auto stddev = [](const std::vector<float>& v) {
    double sum = 0, sq = 0;
    for (float x : v) sum += x, sq += double(x) * x;
    const double mean = sum / v.size();
    return std::sqrt(sq / v.size() - mean * mean);
  };
  EXPECT_NEAR(stddev(read(s, "vision_model.encoder.layers.0.mlp.fc1.weight")), std::sqrt(2.0 / (1152 + 4304)), 2e-4);
  EXPECT_NEAR(stddev(read(s, "vision_model.encoder.layers.0.self_attn.q_proj.weight")), std::sqrt(2.0 / 2304), 2e-4);
  EXPECT_NEAR(stddev(read(s, "vision_model.head.attention.in_proj_weight")), std::sqrt(2.0 / 2304), 2e-4);
  EXPECT_NEAR(stddev(read(s, "vision_model.embeddings.position_embedding.weight")), 1 / std::sqrt(1152.0), 2e-4);
  EXPECT_NEAR(stddev(read(s, "vision_model.encoder.layers.0.mlp.fc1.bias")), 1e-6, 1e-7);
  for (float v : read(s, "vision_model.encoder.layers.0.layer_norm1.weight")) ASSERT_EQ(v, 1.0f);
  EXPECT_NEAR(stddev(model::random_image(c, 0, 0)), 0.5, 2e-3);
  EXPECT_NE(model::random_image(c, 0, 0), model::random_image(c, 0, 1));
}

TEST(RandomModel, NormalGeneratorIsStandard) {
  double sum = 0, sq = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double z = model::seeded_normal(42, static_cast<std::uint64_t>(i));
    sum += z;
    sq += z * z;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(sq / n, 1.0, 0.01);
}

TEST(Patches, RowsAreYXChannelOrder) {
  const ViTConfig c = ViTConfig::small();  // 28x28, patch 14
  std::vector<float> chw(3 * 28 * 28);
  for (int ch = 0; ch < 3; ++ch)
    for (int y = 0; y < 28; ++y)
      for (int x = 0; x < 28; ++x) chw[(ch * 28 + y) * 28 + x] = float(ch * 10000 + y * 100 + x);
  const auto rows = model::patch_rows(c, chw);
  ASSERT_EQ(rows.size(), 4u * 588);
  // Patch 1 is (py 0, px 1); element (y 2, x 3, channel 1).
  EXPECT_EQ(rows[1 * 588 + (2 * 14 + 3) * 3 + 1], 10000 + 2 * 100 + 14 + 3);
  // Patch 2 is (py 1, px 0).
  EXPECT_EQ(rows[2 * 588 + 0], 14 * 100);
}
