#include <gtest/gtest.h>

#include "model/checkpoint.hpp"
#include "model/config.hpp"
#include "model/numerics_config.hpp"
#include "support/error.hpp"

using namespace tilevit;
using model::ViTConfig;

TEST(Config, So400mMatchesWorkload) {
  const ViTConfig c = ViTConfig::so400m();
  EXPECT_EQ(c.patches(), 729);
  EXPECT_EQ(c.patch_dim(), 588);
  EXPECT_EQ(c.parameter_count(), 428225600);  // WORKLOAD.md
  EXPECT_NEAR(c.flops_per_image() / 1e9, 670.35, 0.5);
  std::int64_t elements = 0;
  for (const auto& t : model::checkpoint_tensors(c)) {
    std::int64_t n = 1;
    for (auto d : t.shape) n *= d;
    elements += n;
  }
  EXPECT_EQ(elements, c.parameter_count());
  EXPECT_NO_THROW(c.validate());
}

TEST(Config, SmallPresetHasSameStructure) {
  const ViTConfig c = ViTConfig::small();
  EXPECT_EQ(c.image_size, 28);
  EXPECT_EQ(c.patches(), 4);
  EXPECT_EQ(c.width, 144);
  EXPECT_EQ(c.heads, 2);
  EXPECT_EQ(c.head_dim, 72);
  EXPECT_EQ(c.mlp, 288);
  EXPECT_NO_THROW(c.validate());
  // Same tensor names as So400m for the same layer count.
  ViTConfig big = ViTConfig::so400m();
  big.layers = c.layers;
  const auto a = model::checkpoint_tensors(c), b = model::checkpoint_tensors(big);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].name, b[i].name);
}

TEST(Config, RejectsOutOfRangeFieldsByName) {
  auto expect_error = [](ViTConfig c, const std::string& field) {
    try {
      c.validate();
      ADD_FAILURE() << "accepted bad " << field;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
      EXPECT_EQ(e.exit_code(), kExitUsage);
    }
  };
  ViTConfig c = ViTConfig::so400m();
  c.layers = 28;
  expect_error(c, "layers");
  c.layers = 0;
  expect_error(c, "layers");
  c = ViTConfig::so400m();
  c.batch = 0;
  expect_error(c, "batch");
  c = ViTConfig::so400m();
  c.heads = 15;
  expect_error(c, "heads");
  EXPECT_THROW(ViTConfig::preset("huge"), Error);
}

// Fuzz finding: 2^29 + 2 heads of 72 wrapped heads x head_dim to 144 (the small width)
// in 32 bits, and the FP32 reference then wrote far outside its buffers.
TEST(Config, HeadsTimesHeadDimCannotWrap) {
  ViTConfig c = ViTConfig::small();
  c.heads = (1 << 29) + 2;
  try {
    c.validate();
    ADD_FAILURE() << "accepted heads " << c.heads;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("heads = 536870914: heads x head_dim must equal width"), std::string::npos)
        << e.what();
  }
}

TEST(Config, NumericsScalesValidated) {
  EXPECT_EQ(model::NumericsConfig::uniform(-4).role(model::GemmRole::MlpUp).scale, -4);
  EXPECT_THROW(model::NumericsConfig::uniform(32), Error);
  EXPECT_THROW(model::NumericsConfig::uniform(-32), Error);
  const auto cal = model::NumericsConfig::calibrated();
  EXPECT_FALSE(cal.role(model::GemmRole::Embedding).fp8);
  EXPECT_EQ(cal.role(model::GemmRole::MapQuery).scale, -12);
}
