// The LayerNorm split over a row's column parts (device_kernels.hpp, docs/NUMERICS.md):
// plain loops, one element at a time, each the definition and the only form. With one
// part they compute exactly device_layernorm_row's statistics and elements.
#include <algorithm>
#include <cmath>
#include <vector>

#include "numerics/device_kernel_table.hpp"
#include "numerics/device_kernels.hpp"

namespace tilevit::numerics {

void device_layernorm_moments(const float* x, int count, float* mean_m2) {
  float sum = 0.0f;
  for (int i = 0; i < count; ++i) sum += x[i];
  const float mean = sum / static_cast<float>(count);
  float squares = 0.0f;
  for (int i = 0; i < count; ++i) {
    const float d = x[i] - mean;
    squares += d * d;
  }
  mean_m2[0] = mean;
  mean_m2[1] = squares;
}

LayerNormParts combine_layernorm_moments(const float* mean_m2, int parts, std::size_t part_stride, int width,
                                         int part_width, float eps) {
  // Chan's pairwise update, parts in column order, from part 0: n, mean and M2 so far.
  float n = static_cast<float>(std::min(part_width, width));
  float mean = mean_m2[0], m2 = mean_m2[1];
  for (int p = 1; p < parts; ++p) {
    const float* part = mean_m2 + static_cast<std::size_t>(p) * part_stride;
    const float nb = static_cast<float>(std::min(part_width, width - p * part_width));
    const float total = n + nb;
    const float delta = part[0] - mean;
    mean = mean + delta * (nb / total);
    m2 = (m2 + part[1]) + (delta * delta) * ((n * nb) / total);
    n = total;
  }
  const float variance = m2 / static_cast<float>(width);
  return {mean, 1.0f / std::sqrt(variance + eps)};
}

void device_layernorm_apply(const float* x, const float* gamma, const float* beta, float* out, int count,
                            const LayerNormParts& s) {
  const scalar::LayerNormStatistics stats{s.mean, s.rstd};
  for (int i = 0; i < count; ++i) out[i] = scalar::layernorm_element(x[i], gamma[i], beta[i], stats);
}

void device_layernorm_split_row(const float* x, const float* gamma, const float* beta, float* out, int width,
                                int part_width, float eps) {
  const int parts = (width + part_width - 1) / part_width;
  std::vector<float> moments(static_cast<std::size_t>(parts) * 2);
  for (int p = 0; p < parts; ++p)
    device_layernorm_moments(x + p * part_width, std::min(part_width, width - p * part_width), &moments[p * 2]);
  const LayerNormParts s = combine_layernorm_moments(moments.data(), parts, 2, width, part_width, eps);
  device_layernorm_apply(x, gamma, beta, out, width, s);
}

}  // namespace tilevit::numerics
