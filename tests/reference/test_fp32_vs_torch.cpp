// The FP32 reference against an independent implementation: tools/torch_siglip.py
// (PyTorch) on the same exported random model. Fixtures: tests/fixtures/torch/, made by
// tools/make_reference_fixtures.py: expected.npy (PyTorch float64) and expected_fp32.npy
// (PyTorch float32); the acceptance bounds hold against both.
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
  config.batch = meta["batch"].get<int>();
  const auto seed = flags["seed"].get<std::uint64_t>();
  const auto weights = model::load_weights(model::RandomModelSource(config, seed), config);
  reference::ImageBatch images;
  for (const auto& input : meta["inputs"]) images.push_back(formats::read_npy(dir + "/" + input.get<std::string>()).data);
  const auto expected = formats::read_npy(dir + "/expected_fp32.npy");
  const auto expected64 = formats::read_npy(dir + "/expected.npy");
  ASSERT_EQ(expected.shape, (std::vector<std::int64_t>{config.batch, config.width}));
  ASSERT_EQ(expected64.shape, expected.shape);

  const auto got = reference::forward_fp32(weights, images);
  for (int b = 0; b < config.batch; ++b) {
    const std::vector<float> e(expected.data.begin() + b * config.width, expected.data.begin() + (b + 1) * config.width);
    const std::vector<float> g(got.begin() + b * config.width, got.begin() + (b + 1) * config.width);
    const auto cmp = reference::compare_embeddings(g, e, config.width);
    const std::vector<float> e64(expected64.data.begin() + b * config.width,
                                 expected64.data.begin() + (b + 1) * config.width);
    const auto cmp64 = reference::compare_embeddings(g, e64, config.width);
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
