// The token sequence as the device builds it: zero input rows where the class and register
// tokens go, and the per-token addend that turns GEMM output into the published tokens.
#include <gtest/gtest.h>

#include "model/patches.hpp"
#include "model/random_model.hpp"
#include "model/token_embedding.hpp"
#include "support/error.hpp"

using namespace tilevit;

TEST(TokenEmbedding, InputRowsLeaveZeroRowsForClassAndRegisters) {
  const auto c = model::ViTConfig::preset("dinov2-reg-tiny");
  const auto image = model::random_image(c, 3, 0);
  const auto patches = model::patch_rows(c, image);
  const auto rows = model::token_input_rows(c, image);
  const std::size_t d = static_cast<std::size_t>(c.patch_dim()), leading = 1 + c.register_tokens;
  ASSERT_EQ(rows.size(), static_cast<std::size_t>(c.tokens()) * d);
  for (std::size_t i = 0; i < leading * d; ++i) ASSERT_EQ(rows[i], 0.0f) << i;
  EXPECT_EQ(std::vector<float>(rows.begin() + static_cast<std::ptrdiff_t>(leading * d), rows.end()), patches);
  const auto siglip = model::ViTConfig::small();
  const auto image2 = model::random_image(siglip, 3, 0);
  EXPECT_EQ(model::token_input_rows(siglip, image2), model::patch_rows(siglip, image2));  // no class token
}

TEST(TokenEmbedding, AddendHoldsClassRegistersAndPositionPlusBias) {
  const auto c = model::ViTConfig::preset("dinov2-reg-tiny");
  const auto w = model::load_weights(model::RandomModelSource(c, 2), c);
  const auto a = model::token_addend(w);
  const std::size_t width = static_cast<std::size_t>(c.width), regs = static_cast<std::size_t>(c.register_tokens);
  ASSERT_EQ(a.size(), static_cast<std::size_t>(c.tokens()) * width);
  for (std::size_t i = 0; i < width; ++i) {
    EXPECT_EQ(a[i], w.class_token[i] + w.position[i]);
    EXPECT_EQ(a[width + i], w.registers[i]);
    const std::size_t last_patch = static_cast<std::size_t>(c.patches()) - 1;
    EXPECT_EQ(a[(1 + regs + last_patch) * width + i], w.position[(1 + last_patch) * width + i] + w.patch_embedding.bias[i]);
  }
  EXPECT_THROW(model::token_addend(model::load_weights(model::RandomModelSource(model::ViTConfig::small(), 2),
                                                       model::ViTConfig::small())),
               Error);
}
