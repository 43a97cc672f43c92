// Pillow 9.4's bicubic resize (libImaging/Resample.c semantics, re-implemented) and the
// SigLIP normalisation. Bit-exactness with Pillow matters more than speed here: every
// double expression below is evaluated in the same order as Pillow's, the build uses
// -ffp-contract=off, and the fixed-point rounding/clipping steps are reproduced as is.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "formats/image.hpp"
#include "support/error.hpp"

namespace tilevit::formats {
namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;  // 8-bit result, 2 bits of headroom for negative lobes
constexpr double kBicubicSupport = 2.0;
constexpr double kBilinearSupport = 1.0;

// Keys' cubic convolution kernel with a = -0.5, in Pillow's exact evaluation order.
double bicubic(double x) {
  constexpr double a = -0.5;
  if (x < 0.0) x = -x;
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
  return 0.0;
}

// Pillow's triangle filter (Image.BILINEAR).
double bilinear(double x) {
  if (x < 0.0) x = -x;
  if (x < 1.0) return 1.0 - x;
  return 0.0;
}

// One axis of the separable resize: for each output index, the first input index used,
// how many are used, and that many fixed-point weights (rows of `taps` ints).
struct AxisWeights {
  int taps = 0;                  // Pillow's ksize: the row stride of `weights`
  std::vector<int> first;        // xmin per output index
  std::vector<int> count;        // xmax - xmin per output index
  std::vector<std::int32_t> weights;
};

AxisWeights axis_weights(int in_size, int out_size, bool linear) {
  // The box is the whole image: in0 = 0, in1 = in_size (floats in Pillow, exact here).
  const double scale = static_cast<double>(in_size) / out_size;
  const double filterscale = scale < 1.0 ? 1.0 : scale;  // widen the kernel only when reducing
  const double support = (linear ? kBilinearSupport : kBicubicSupport) * filterscale;
  AxisWeights axis;
  axis.taps = static_cast<int>(std::ceil(support)) * 2 + 1;
  axis.first.resize(out_size);
  axis.count.resize(out_size);
  axis.weights.assign(static_cast<std::size_t>(out_size) * axis.taps, 0);
  std::vector<double> w(axis.taps);
  for (int xx = 0; xx < out_size; ++xx) {
    const double center = 0.0 + (xx + 0.5) * scale;
    const double ss = 1.0 / filterscale;
    // Pillow rounds with (int)(v + 0.5), i.e. truncation toward zero, then clamps.
    int xmin = static_cast<int>(center - support + 0.5);
    if (xmin < 0) xmin = 0;
    int xmax = static_cast<int>(center + support + 0.5);
    if (xmax > in_size) xmax = in_size;
    xmax -= xmin;
    double total = 0.0;
    for (int x = 0; x < xmax; ++x) {
      w[x] = linear ? bilinear((x + xmin - center + 0.5) * ss) : bicubic((x + xmin - center + 0.5) * ss);
      total += w[x];
    }
    std::int32_t* k = &axis.weights[static_cast<std::size_t>(xx) * axis.taps];
    for (int x = 0; x < xmax; ++x) {
      const double normalised = total != 0.0 ? w[x] / total : w[x];
      // Round half away from zero into 22-bit fixed point (Pillow's normalize_coeffs_8bpc).
      const double scaled = normalised * (1 << kPrecisionBits);
      k[x] = static_cast<std::int32_t>(normalised < 0 ? -0.5 + scaled : 0.5 + scaled);
    }
    axis.first[xx] = xmin;
    axis.count[xx] = xmax;
  }
  return axis;
}

// Fixed-point accumulator -> 8 bits: arithmetic shift (floor), then clamp to 0..255.
inline std::uint8_t clip8(std::int32_t acc) {
  return static_cast<std::uint8_t>(std::clamp(acc >> kPrecisionBits, 0, 255));
}

constexpr std::int32_t kHalf = std::int32_t{1} << (kPrecisionBits - 1);

// Horizontal pass over input rows [row0, row0 + rows): output has `rows` rows.
std::vector<std::uint8_t> resample_horizontal(const std::uint8_t* in, int in_width, int row0, int rows,
                                              const AxisWeights& axis, int out_width) {
  std::vector<std::uint8_t> out(static_cast<std::size_t>(rows) * out_width * 3);
  for (int y = 0; y < rows; ++y) {
    const std::uint8_t* src = in + (static_cast<std::size_t>(row0) + y) * in_width * 3;
    std::uint8_t* dst = &out[static_cast<std::size_t>(y) * out_width * 3];
    for (int xx = 0; xx < out_width; ++xx) {
      const std::int32_t* k = &axis.weights[static_cast<std::size_t>(xx) * axis.taps];
      const std::uint8_t* p = src + static_cast<std::size_t>(axis.first[xx]) * 3;
      std::int32_t r = kHalf, g = kHalf, b = kHalf;
      for (int x = 0; x < axis.count[xx]; ++x, p += 3) {
        r += p[0] * k[x];
        g += p[1] * k[x];
        b += p[2] * k[x];
      }
      dst[3 * xx + 0] = clip8(r);
      dst[3 * xx + 1] = clip8(g);
      dst[3 * xx + 2] = clip8(b);
    }
  }
  return out;
}

// Vertical pass; `row_shift` is subtracted from every first row (the horizontal pass
// only produced the rows the vertical pass reads, starting at input row row_shift).
std::vector<std::uint8_t> resample_vertical(const std::uint8_t* in, int width, const AxisWeights& axis,
                                            int out_height, int row_shift) {
  std::vector<std::uint8_t> out(static_cast<std::size_t>(out_height) * width * 3);
  const std::size_t stride = static_cast<std::size_t>(width) * 3;
  for (int yy = 0; yy < out_height; ++yy) {
    const std::int32_t* k = &axis.weights[static_cast<std::size_t>(yy) * axis.taps];
    const std::uint8_t* top = in + static_cast<std::size_t>(axis.first[yy] - row_shift) * stride;
    std::uint8_t* dst = &out[static_cast<std::size_t>(yy) * stride];
    for (std::size_t i = 0; i < stride; ++i) {
      std::int32_t acc = kHalf;
      for (int y = 0; y < axis.count[yy]; ++y) acc += top[static_cast<std::size_t>(y) * stride + i] * k[y];
      dst[i] = clip8(acc);
    }
  }
  return out;
}

}  // namespace

RgbImage resize_bicubic_pillow(const RgbImage& image, int out_width, int out_height) {
  return resize_pillow(image, out_width, out_height, 3);
}

RgbImage resize_pillow(const RgbImage& image, int out_width, int out_height, int resample) {
  if (resample != 2 && resample != 3)
    throw Error("resize_pillow: resample filter " + std::to_string(resample) + " is not supported", kExitInternal);
  const bool linear = resample == 2;
  if (image.width <= 0 || image.height <= 0 ||
      image.pixels.size() != static_cast<std::size_t>(image.width) * image.height * 3)
    throw Error("resize_bicubic_pillow: invalid input image " + std::to_string(image.width) + "x" +
                    std::to_string(image.height) + " with " + std::to_string(image.pixels.size()) + " bytes",
                kExitInternal);
  if (out_width <= 0 || out_height <= 0 || out_width > kMaxImageSide || out_height > kMaxImageSide)
    throw Error("resize_bicubic_pillow: invalid output size " + std::to_string(out_width) + "x" +
                std::to_string(out_height));

  const bool need_horizontal = out_width != image.width;
  const bool need_vertical = out_height != image.height;
  RgbImage out;
  out.width = out_width;
  out.height = out_height;
  if (!need_horizontal && !need_vertical) {  // Pillow returns a copy
    out.pixels = image.pixels;
    return out;
  }
  const AxisWeights vertical = axis_weights(image.height, out_height, linear);
  // Rows of the source the vertical pass reads; the horizontal pass does just those.
  const int row_first = vertical.first.front();
  const int row_last = vertical.first.back() + vertical.count.back();

  std::vector<std::uint8_t> temp;
  const std::uint8_t* stage = image.pixels.data();
  int stage_width = image.width;
  int row_shift = 0;
  if (need_horizontal) {
    const AxisWeights horizontal = axis_weights(image.width, out_width, linear);
    temp = resample_horizontal(image.pixels.data(), image.width, row_first, row_last - row_first, horizontal,
                               out_width);
    stage = temp.data();
    stage_width = out_width;
    row_shift = row_first;
  }
  if (need_vertical) {
    out.pixels = resample_vertical(stage, stage_width, vertical, out_height, row_shift);
  } else {
    out.pixels = std::move(temp);  // horizontal only: row_first = 0 and all rows were done
  }
  return out;
}

std::vector<float> preprocess_siglip(const RgbImage& image, int resize_size, int crop_size) {
  if (resize_size <= 0 || crop_size <= 0 || crop_size > resize_size)
    throw Error("preprocess_siglip: invalid sizes resize " + std::to_string(resize_size) + ", crop " +
                std::to_string(crop_size));
  const RgbImage resized = resize_bicubic_pillow(image, resize_size, resize_size);
  const std::size_t crop = static_cast<std::size_t>(crop_size);
  const std::size_t plane = crop * crop;
  std::vector<float> chw(3 * plane);
  for (std::size_t y = 0; y < crop; ++y) {
    const std::uint8_t* row = &resized.pixels[y * resized.width * 3];
    for (std::size_t x = 0; x < crop; ++x) {
      for (std::size_t c = 0; c < 3; ++c) {
        // float32 throughout, as numpy computes (x / 255 - 0.5) / 0.5 on a float32 array.
        const float v = static_cast<float>(row[3 * x + c]) / 255.0f;
        chw[c * plane + y * crop + x] = (v - 0.5f) / 0.5f;
      }
    }
  }
  return chw;
}

std::vector<float> preprocess_image(const RgbImage& image, const model::ViTConfig& c) {
  const model::Preprocessing& p = c.preprocessing;
  const model::Preprocessing siglip;
  if (!p.shortest_edge && !p.center_crop && p.resample == siglip.resample && p.mean == siglip.mean &&
      p.std == siglip.std)
    return preprocess_siglip(image, c.resize_size, c.image_size);  // the main job's arithmetic, unchanged
  int w = c.resize_size, h = c.resize_size;
  if (p.shortest_edge) {  // transformers' get_resize_output_image_size(default_to_square=False)
    const bool wide = image.width >= image.height;
    const int shorter = wide ? image.height : image.width, longer = wide ? image.width : image.height;
    const int other = static_cast<int>(static_cast<std::int64_t>(c.resize_size) * longer / shorter);
    (wide ? w : h) = other;
  }
  const RgbImage resized = resize_pillow(image, w, h, p.resample);
  const int crop = p.center_crop ? (p.crop_size ? p.crop_size : c.image_size) : c.image_size;
  if (crop > resized.width || crop > resized.height)
    throw Error("preprocessing: crop " + std::to_string(crop) + " is larger than the resized " +
                std::to_string(resized.width) + "x" + std::to_string(resized.height) + " image");
  const int top = p.center_crop ? (resized.height - crop) / 2 : 0, left = p.center_crop ? (resized.width - crop) / 2 : 0;
  const std::size_t s = static_cast<std::size_t>(c.image_size), plane = s * s;
  std::vector<float> chw(3 * plane);
  for (std::size_t y = 0; y < s; ++y) {
    const std::uint8_t* row = &resized.pixels[((top + y) * resized.width + left) * 3];
    for (std::size_t x = 0; x < s; ++x)
      for (std::size_t ch = 0; ch < 3; ++ch) {
        // transformers: rescale in float64, cast to float32, then normalise in float32.
        const float v = static_cast<float>(row[3 * x + ch] * (1.0 / 255.0));
        chw[ch * plane + y * s + x] = (v - p.mean[ch]) / p.std[ch];
      }
  }
  return chw;
}

}  // namespace tilevit::formats
