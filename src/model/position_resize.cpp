#include "model/position_resize.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "support/error.hpp"

namespace tilevit::model {
namespace {

// One output index's taps: input indices and weights.
struct Taps {
  std::vector<int> index;
  std::vector<double> weight;
};

// ATen's upsample_bicubic2d: source = scale (dst + 0.5) - 0.5 (no clamp for cubic),
// four taps around floor(source), indices clamped to the edge, A = -0.75.
Taps cubic_taps(int in, int out, int dst) {
  constexpr double a = -0.75;
  const double scale = static_cast<double>(in) / out;
  const double src = scale * (dst + 0.5) - 0.5;
  const double base = std::floor(src);
  const double t = src - base;
  auto near = [&](double x) { return ((a + 2) * x - (a + 3)) * x * x + 1; };           // |x| <= 1
  auto far = [&](double x) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; };     // 1 < |x| < 2
  const double w[4] = {far(t + 1), near(t), near(1 - t), far(2 - t)};
  Taps taps;
  for (int k = 0; k < 4; ++k) {
    taps.index.push_back(std::clamp(static_cast<int>(base) - 1 + k, 0, in - 1));
    taps.weight.push_back(w[k]);
  }
  return taps;
}

// ATen's _upsample_bicubic2d_aa: support 2 x max(scale, 1) around the centre, the a = -0.5
// kernel evaluated at (j - centre + 0.5) / max(scale, 1), normalised to sum 1.
Taps antialias_taps(int in, int out, int dst) {
  constexpr double a = -0.5;
  auto kernel = [&](double x) {
    x = std::abs(x);
    if (x < 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
    if (x < 2) return (((x - 5) * x + 8) * x - 4) * a;
    return 0.0;
  };
  const double scale = static_cast<double>(in) / out;
  const double support = 2.0 * (scale >= 1.0 ? scale : 1.0);
  const double invscale = scale >= 1.0 ? 1.0 / scale : 1.0;
  const double center = scale * (dst + 0.5);
  const int lo = std::max(static_cast<int>(center - support + 0.5), 0);
  const int hi = std::min(static_cast<int>(center + support + 0.5), in);
  Taps taps;
  double total = 0;
  for (int j = lo; j < hi; ++j) {
    taps.index.push_back(j);
    taps.weight.push_back(kernel((j - center + 0.5) * invscale));
    total += taps.weight.back();
  }
  if (total != 0)
    for (double& w : taps.weight) w /= total;
  return taps;
}

}  // namespace

std::vector<float> resize_position_grid(const std::vector<float>& table, int in_grid, int out_grid, int width,
                                        PositionResize mode) {
  const std::size_t w = static_cast<std::size_t>(width);
  if (table.size() != static_cast<std::size_t>(in_grid) * in_grid * w || out_grid < 1)
    throw Error("resize_position_grid: table of " + std::to_string(table.size()) + " values for a " +
                    std::to_string(in_grid) + "-grid of width " + std::to_string(width),
                kExitInternal);
  if (in_grid == out_grid) return table;
  if (mode == PositionResize::none)
    throw Error("position table is " + std::to_string(in_grid) + "x" + std::to_string(in_grid) + ", the image grid " +
                std::to_string(out_grid) + "x" + std::to_string(out_grid) + ", and this model does not interpolate");
  std::vector<Taps> taps;
  for (int i = 0; i < out_grid; ++i)
    taps.push_back(mode == PositionResize::bicubic ? cubic_taps(in_grid, out_grid, i)
                                                   : antialias_taps(in_grid, out_grid, i));
  // Width pass (x), then height pass (y), in double.
  std::vector<double> rows(static_cast<std::size_t>(in_grid) * out_grid * w, 0.0);
  for (int y = 0; y < in_grid; ++y)
    for (int x = 0; x < out_grid; ++x) {
      double* dst = &rows[(static_cast<std::size_t>(y) * out_grid + x) * w];
      for (std::size_t k = 0; k < taps[x].index.size(); ++k) {
        const float* src = &table[(static_cast<std::size_t>(y) * in_grid + taps[x].index[k]) * w];
        for (std::size_t c = 0; c < w; ++c) dst[c] += taps[x].weight[k] * src[c];
      }
    }
  std::vector<float> out(static_cast<std::size_t>(out_grid) * out_grid * w);
  for (int y = 0; y < out_grid; ++y)
    for (int x = 0; x < out_grid; ++x) {
      float* dst = &out[(static_cast<std::size_t>(y) * out_grid + x) * w];
      for (std::size_t c = 0; c < w; ++c) {
        double sum = 0;
        for (std::size_t k = 0; k < taps[y].index.size(); ++k)
          sum += taps[y].weight[k] * rows[(static_cast<std::size_t>(taps[y].index[k]) * out_grid + x) * w + c];
        dst[c] = static_cast<float>(sum);
      }
    }
  return out;
}

}  // namespace tilevit::model
