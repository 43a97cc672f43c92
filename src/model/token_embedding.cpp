#include "model/token_embedding.hpp"

#include <algorithm>

#include "model/patches.hpp"
#include "support/error.hpp"

namespace tilevit::model {

std::vector<float> token_input_rows(const ViTConfig& c, const std::vector<float>& chw) {
  std::vector<float> patches = patch_rows(c, chw);
  if (!c.class_token) return patches;
  const std::size_t d = static_cast<std::size_t>(c.patch_dim());
  const std::size_t leading = static_cast<std::size_t>(1 + c.register_tokens);
  std::vector<float> rows(static_cast<std::size_t>(c.tokens()) * d, 0.0f);
  std::copy(patches.begin(), patches.end(), rows.begin() + static_cast<std::ptrdiff_t>(leading * d));
  return rows;
}

std::vector<float> token_addend(const ViTWeights& w) {
  const ViTConfig& c = w.config;
  if (!c.class_token) throw Error("token_addend: model " + c.name + " has no class token", kExitInternal);
  const std::size_t width = static_cast<std::size_t>(c.width);
  const std::size_t registers = static_cast<std::size_t>(c.register_tokens);
  std::vector<float> addend(static_cast<std::size_t>(c.tokens()) * width);
  for (std::size_t i = 0; i < width; ++i) addend[i] = w.class_token[i] + w.position[i];
  std::copy(w.registers.begin(), w.registers.end(), addend.begin() + static_cast<std::ptrdiff_t>(width));
  const std::size_t first_patch = 1 + registers;
  for (std::size_t j = 0; j < static_cast<std::size_t>(c.patches()); ++j)
    for (std::size_t i = 0; i < width; ++i)
      addend[(first_patch + j) * width + i] = w.position[(1 + j) * width + i] + w.patch_embedding.bias[i];
  return addend;
}

}  // namespace tilevit::model
