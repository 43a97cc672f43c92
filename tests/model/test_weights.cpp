#include <gtest/gtest.h>

#include <cmath>

#include "map_source.hpp"
#include "model/weights.hpp"

using namespace tilevit;
using model::ViTConfig;

namespace {
std::string load_error(const model::TensorSource& source, const ViTConfig& c) {
  try {
    model::load_weights(source, c);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(Weights, LoadsFusedAndPermuted) {
  const ViTConfig c = ViTConfig::small();
  auto source = test_support::MapSource::copy_of(model::RandomModelSource(c, 1));
  const auto w = model::load_weights(source, c);
  ASSERT_EQ(w.layers.size(), 2u);
  const int width = c.width;
  // QKV fused in q, k, v order.
  const auto& k = source.tensors["vision_model.encoder.layers.1.self_attn.k_proj.weight"].second;
  EXPECT_EQ(w.layers[1].qkv.out, 3 * width);
  EXPECT_EQ(w.layers[1].qkv.weight[static_cast<std::size_t>(width) * width + 5], k[5]);
  const auto& vb = source.tensors["vision_model.encoder.layers.1.self_attn.v_proj.bias"].second;
  EXPECT_EQ(w.layers[1].qkv.bias[2 * width + 7], vb[7]);
  // MAP in_proj split into q and kv.
  const auto& in_w = source.tensors["vision_model.head.attention.in_proj_weight"].second;
  EXPECT_EQ(w.head.kv.weight[3], in_w[static_cast<std::size_t>(width) * width + 3]);
  // Patch embedding [out][c][y][x] -> [out][(y*14+x)*3+c].
  const auto& conv = source.tensors["vision_model.embeddings.patch_embedding.weight"].second;
  const int o = 3, ch = 2, y = 5, x = 9;
  EXPECT_EQ(w.patch_embedding.weight[static_cast<std::size_t>(o) * 588 + (y * 14 + x) * 3 + ch],
            conv[((static_cast<std::size_t>(o) * 3 + ch) * 14 + y) * 14 + x]);
}

TEST(Weights, MissingTensorIsNamed) {
  const ViTConfig c = ViTConfig::small();
  auto source = test_support::MapSource::copy_of(model::RandomModelSource(c, 1));
  source.tensors.erase("vision_model.encoder.layers.1.mlp.fc2.bias");
  const auto message = load_error(source, c);
  EXPECT_NE(message.find("test.safetensors"), std::string::npos) << message;
  EXPECT_NE(message.find("missing tensor vision_model.encoder.layers.1.mlp.fc2.bias"), std::string::npos) << message;
}

TEST(Weights, WrongShapeIsNamed) {
  const ViTConfig c = ViTConfig::small();
  auto source = test_support::MapSource::copy_of(model::RandomModelSource(c, 1));
  source.tensors["vision_model.head.probe"].first = {1, 144};
  const auto message = load_error(source, c);
  EXPECT_NE(message.find("vision_model.head.probe has shape [1,144], expected [1,1,144]"), std::string::npos)
      << message;
}

TEST(Weights, NonFiniteValueIsNamed) {
  const ViTConfig c = ViTConfig::small();
  auto source = test_support::MapSource::copy_of(model::RandomModelSource(c, 1));
  source.tensors["vision_model.post_layernorm.bias"].second[17] = NAN;
  const auto message = load_error(source, c);
  EXPECT_NE(message.find("vision_model.post_layernorm.bias element 17 is NaN"), std::string::npos) << message;
  source.tensors["vision_model.post_layernorm.bias"].second[17] = INFINITY;
  EXPECT_NE(load_error(source, c).find("is infinite"), std::string::npos);
}

TEST(Weights, TooFewLayersInCheckpoint) {
  ViTConfig c = ViTConfig::so400m();
  c.layers = 1;
  ViTConfig want = ViTConfig::so400m();
  want.layers = 2;
  // A one-layer so400m source asked for two layers: layer 1 is missing. (Only checks names.)
  struct Empty : model::TensorSource {
    std::string describe() const override { return "empty.safetensors"; }
    std::optional<model::TensorInfo> info(const std::string&) const override { return std::nullopt; }
    void read_f32(const std::string&, std::span<float>) const override {}
  } empty;
  EXPECT_NE(load_error(empty, want).find("missing tensor vision_model.embeddings.patch_embedding.weight"),
            std::string::npos);
}

// A pipeline rank loads only its part: the layers of its stages (the others empty, same
// indices), the embedding only with the first stage, the head only with the last; what it
// loads is the whole model's, value for value. Tensors outside the part are not read.
TEST(Weights, PartLoadsOnlyItsLayersEmbeddingAndHead) {
  const ViTConfig c = ViTConfig::small();
  const model::RandomModelSource source(c, 3);
  const auto whole = model::load_weights(source, c);
  const auto middle = model::load_weights(source, c, model::WeightPart{1, 2, false, false});
  ASSERT_EQ(middle.layers.size(), 2u);
  EXPECT_TRUE(middle.layers[0].qkv.weight.empty());
  EXPECT_EQ(middle.layers[1].qkv.weight, whole.layers[1].qkv.weight);
  EXPECT_EQ(middle.layers[1].fc2.bias, whole.layers[1].fc2.bias);
  EXPECT_TRUE(middle.patch_embedding.weight.empty());
  EXPECT_TRUE(middle.position.empty());
  EXPECT_TRUE(middle.head.fc1.weight.empty());
  EXPECT_TRUE(middle.post_ln.scale.empty());
  const auto first = model::load_weights(source, c, model::WeightPart{0, 1, true, false});
  EXPECT_EQ(first.patch_embedding.weight, whole.patch_embedding.weight);
  EXPECT_EQ(first.position, whole.position);
  EXPECT_TRUE(first.layers[1].fc1.weight.empty());
  // A source missing layer 0 still serves a part without it.
  auto partial = test_support::MapSource::copy_of(source);
  for (auto it = partial.tensors.begin(); it != partial.tensors.end();)
    it = it->first.find("layers.0.") != std::string::npos ? partial.tensors.erase(it) : std::next(it);
  EXPECT_EQ(model::load_weights(partial, c, model::WeightPart{1, 2, true, true}).layers[1].qkv.weight,
            whole.layers[1].qkv.weight);
  EXPECT_NE(load_error(partial, c).find("layers.0."), std::string::npos);
}
