#include "model/patches.hpp"

#include "support/error.hpp"

namespace tilevit::model {

std::vector<float> patch_rows(const ViTConfig& c, const std::vector<float>& chw) {
  const std::size_t s = static_cast<std::size_t>(c.image_size);
  if (chw.size() != 3 * s * s)
    throw Error("image tensor has " + std::to_string(chw.size()) + " values, expected 3x" + std::to_string(s) + "x" +
                std::to_string(s));
  const int g = c.grid(), p = c.patch;
  std::vector<float> rows(static_cast<std::size_t>(c.patches()) * c.patch_dim());
  std::size_t i = 0;
  for (int py = 0; py < g; ++py)
    for (int px = 0; px < g; ++px)
      for (int y = 0; y < p; ++y)
        for (int x = 0; x < p; ++x)
          for (int ch = 0; ch < 3; ++ch)
            rows[i++] = chw[(static_cast<std::size_t>(ch) * s + py * p + y) * s + px * p + x];
  return rows;
}

}  // namespace tilevit::model
