// The FP32 reference against independent implementations on the same exported random
// model: tools/torch_siglip.py (SigLIP) and tools/torch_vit_family.py (CLIP, DINOv2, and
// torchvision's ViT for google ViT). Fixtures: tests/fixtures/torch/, made by
// tools/make_reference_fixtures.py and tools/make_family_fixtures.py: expected.npy
// (PyTorch float64) and expected_fp32.npy (PyTorch float32), [batch, outputs per image];
// the acceptance bounds hold against both.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "formats/npy.hpp"
#include "model/random_model.hpp"
#include "reference/compare.hpp"
#include "reference/forward.hpp"

using namespace tilevit;

namespace {

void check_case(const std::string& name) {
  const std::string dir = std::string(TILEVIT_FIXTURES) + "/torch/" + name;
  std::ifstream meta_file(dir + "/meta.json");
  ASSERT_TRUE(meta_file) << dir;
  const auto meta = nlohmann::json::parse(meta_file);
  const auto& flags = meta["tilevit_flags"];
  model::ViTConfig config = model::ViTConfig::preset(flags["preset"].get<std::string>());
  config.layers = flags["layers"].get<int>();
  if (flags.contains("output_layer")) {  // hidden_states[K], as --output-layer K
    const int k = flags["output_layer"].get<int>();
    config.layers = k < 0 ? config.max_layers + 1 + k : k;
    config.pooling = model::Pooling::hidden_state;
  }
  config.batch = meta["batch"].get<int>();
  const int per_image = config.output_rows() * config.output_width();
  const auto seed = flags["seed"].get<std::uint64_t>();
  const auto weights = model::load_weights(model::RandomModelSource(config, seed), config);
  reference::ImageBatch images;
  for (const auto& input : meta["inputs"]) images.push_back(formats::read_npy(dir + "/" + input.get<std::string>()).data);
  const auto expected = formats::read_npy(dir + "/expected_fp32.npy");
  const auto expected64 = formats::read_npy(dir + "/expected.npy");
  ASSERT_EQ(expected.shape, (std::vector<std::int64_t>{config.batch, per_image}));
  ASSERT_EQ(expected64.shape, expected.shape);

  const auto got = reference::forward_fp32(weights, images);
  ASSERT_EQ(got.size(), expected.data.size());
  for (int b = 0; b < config.batch; ++b) {
    const std::vector<float> e(expected.data.begin() + b * per_image, expected.data.begin() + (b + 1) * per_image);
    const std::vector<float> g(got.begin() + b * per_image, got.begin() + (b + 1) * per_image);
    const auto cmp = reference::compare_embeddings(g, e, per_image);
    const std::vector<float> e64(expected64.data.begin() + b * per_image, expected64.data.begin() + (b + 1) * per_image);
    const auto cmp64 = reference::compare_embeddings(g, e64, per_image);
    EXPECT_GE(cmp64.min_cosine, 0.999999) << name << " vs float64";
    EXPECT_LE(cmp64.max_abs_error, 1e-4 * cmp64.max_reference_magnitude) << name << " vs float64";
    EXPECT_GE(cmp.min_cosine, 0.999999) << name << " image " << b;
    EXPECT_LE(cmp.max_abs_error, 1e-4 * cmp.max_reference_magnitude) << name << " image " << b;
    ::testing::Test::RecordProperty(name + "_cosine_" + std::to_string(b), std::to_string(cmp.min_cosine));
    ::testing::Test::RecordProperty(name + "_max_abs_error_" + std::to_string(b), std::to_string(cmp.max_abs_error));
  }
}

}  // namespace

TEST(Fp32VsTorch, SmallPreset) { check_case("small"); }
TEST(Fp32VsTorch, So400mTwoLayers) { check_case("so400m_l2"); }
TEST(Fp32VsTorch, ClipProjectedClassToken) { check_case("clip_tiny"); }
TEST(Fp32VsTorch, ClipOutputLayerMinusTwo) { check_case("clip_tiny_layer_m2"); }
TEST(Fp32VsTorch, Dinov2InterpolatedPositions) { check_case("dinov2_tiny"); }
TEST(Fp32VsTorch, Dinov2RegistersAntialiased) { check_case("dinov2_reg_tiny"); }
TEST(Fp32VsTorch, Dinov2RegistersHiddenState) { check_case("dinov2_reg_tiny_layer_2"); }
TEST(Fp32VsTorch, VitAgainstTorchvision) { check_case("vit_tiny"); }
