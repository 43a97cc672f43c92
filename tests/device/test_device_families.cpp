// The other families compiled for the test machine and run on the device model: every
// tiny preset (class token, registers, pre-encoder LayerNorm, LN eps, erf GELU,
// quick_gelu, LayerScale, head dims 64, 80 and 96 (SigLIP2 g-opt's), CLIP's projection) and every output
// (class token, per-token, an earlier layer's hidden state) bit for bit with the
// device-numerics reference, and close to the FP32 reference.
#include <gtest/gtest.h>

#include "compiler/compile.hpp"
#include "compiler/verify.hpp"
#include "device/device.hpp"
#include "model/random_model.hpp"
#include "package/program_codec.hpp"
#include "reference/compare.hpp"
#include "reference/forward.hpp"

using namespace tilevit;

namespace {

struct Case {
  const char* preset;
  model::Pooling pooling;
  int layers;
};

model::ViTConfig config_of(const Case& k) {
  model::ViTConfig c = model::ViTConfig::preset(k.preset);
  c.pooling = k.pooling;
  c.layers = k.layers;
  c.batch = 2;
  return c;
}

class Families : public ::testing::TestWithParam<Case> {};

TEST_P(Families, DeviceBitExactWithDeviceNumericsAndCloseToFp32) {
  const model::ViTConfig c = config_of(GetParam());
  const auto compiled =
      compiler::compile_model(compiler::build_vit_graph(c, model::NumericsConfig::uniform(-4)), target::test16(), {});
  const auto& e = compiled.executable;
  EXPECT_TRUE(compiler::verify_program(target::test16(), e.program, e.bindings, e.tensors).ok());
  // Through the package bytes: the family's features must survive encoding.
  const auto container = package::Container::from_bytes(package::encode_package(e).bytes(), "t.tvpkg");
  const compiler::Executable loaded = package::decode_package(container);
  EXPECT_EQ(loaded.config.family, c.family);
  EXPECT_EQ(loaded.config.tokens(), c.tokens());
  EXPECT_EQ(loaded.config.pooling, c.pooling);

  const auto weights = model::load_weights(model::RandomModelSource(c, 5), c);
  std::vector<std::vector<float>> images;
  for (int i = 0; i < c.batch; ++i) images.push_back(model::random_image(c, 5, i));
  device::Device dev(loaded);
  dev.upload_weights(weights);
  const auto got = dev.run(images);
  ASSERT_EQ(got.size(), c.output_values_per_image() * c.batch);
  EXPECT_EQ(got, reference::DeviceNumericsModel(weights, loaded.numerics).forward(images));
  const auto cmp = reference::compare_embeddings(got, reference::forward_fp32(weights, images), c.output_values_per_image());
  EXPECT_TRUE(cmp.all_finite);
  EXPECT_GT(cmp.min_cosine, 0.99);
}

using model::Pooling;
INSTANTIATE_TEST_SUITE_P(TinyPresets, Families,
                         ::testing::Values(Case{"clip-tiny", Pooling::class_token, 2},
                                           Case{"clip-tiny", Pooling::tokens, 2},
                                           Case{"clip-tiny", Pooling::hidden_state, 1},
                                           Case{"dinov2-tiny", Pooling::class_token, 2},
                                           Case{"dinov2-tiny", Pooling::tokens, 2},
                                           Case{"dinov2-reg-tiny", Pooling::class_token, 2},
                                           Case{"dinov2-reg-tiny", Pooling::hidden_state, 2},
                                           Case{"vit-tiny", Pooling::class_token, 2},
                                           Case{"vit-tiny", Pooling::tokens, 1},
                                           Case{"siglip2-tiny", Pooling::map_head, 2}),
                         [](const auto& info) {
                           std::string name = std::string(info.param.preset) + "_" + model::pooling_name(info.param.pooling) +
                                              "_" + std::to_string(info.param.layers);
                           for (char& ch : name)
                             if (ch == '-') ch = '_';
                           return name;
                         });

}  // namespace
