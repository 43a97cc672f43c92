#pragma once
// Image inputs for the model: PNG/JPEG decoding (libpng / libjpeg-turbo), a bit-exact
// re-implementation of Pillow 9.4's bicubic resize, and SigLIP's normalisation.
// The checkpoint was trained on Pillow-preprocessed images, so "like Pillow" is the spec:
// decode_image matches Image.open(p).convert("RGB") and resize_bicubic_pillow matches
// Image.resize((w, h), Image.BICUBIC) byte for byte (tests/formats/test_image.cpp checks
// both against fixtures that tools/make_image_fixtures.py produced with Pillow).
#include <cstdint>
#include <string>
#include <vector>

#include "model/config.hpp"

namespace tilevit::formats {

struct RgbImage {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> pixels;  // RGB interleaved, row-major, width * height * 3 bytes
};

// Decode limits, checked from the header before any pixel buffer is allocated. The pixel
// limit is Pillow's MAX_IMAGE_PIXELS (its decompression-bomb threshold); with it and a cap
// on libjpeg's own buffers, no input needs more than kMaxDecodeBytes to decode.
inline constexpr int kMaxImageSide = 32768;
inline constexpr std::int64_t kMaxImagePixels = 89'478'485;
inline constexpr std::int64_t kMaxDecodeBytes = std::int64_t{1} << 30;

// Decodes PNG or JPEG chosen by the magic bytes (not the extension) and converts like
// Pillow's convert("RGB"): grey -> RGB, palette -> RGB, alpha and tRNS dropped (not
// composited), 16-bit PNG samples truncated to their high byte except 16-bit grey,
// which Pillow opens as mode "I" and clips to 0..255; CMYK/YCCK JPEG -> Pillow's
// inverted-Adobe CMYK -> RGB formula. Truncated/corrupt data, zero or over-limit
// dimensions and unknown formats throw a one-line Error naming the path.
RgbImage decode_image(const std::string& path);

// Pillow 9.4 Image.resize((out_width, out_height), Image.BICUBIC) for 8-bit RGB, bit for
// bit: separable convolution (horizontal pass first, clipped to 8 bits, then vertical),
// support 2 widened by the reduction factor, a = -0.5, 22-bit fixed-point weights.
// Same-size input is copied. Throws Error on non-positive or over-limit sizes.
RgbImage resize_bicubic_pillow(const RgbImage& image, int out_width, int out_height);

// Pillow 9.4 resize with filter 2 (bilinear) or 3 (bicubic), bit for bit as above.
RgbImage resize_pillow(const RgbImage& image, int out_width, int out_height, int resample);

// preprocessor_config.json's pipeline for `config` (model/config.hpp Preprocessing): resize
// (square, or shortest edge as transformers computes it), centre or top-left crop, the
// model's top-left image_size square, x/255 then (x - mean) / std per channel. SigLIP's
// default preprocessing goes through preprocess_siglip. Returns CHW [3, S, S].
std::vector<float> preprocess_image(const RgbImage& image, const model::ViTConfig& config);

// SigLIP preprocessing: bicubic resize to resize_size x resize_size, x/255, (x-0.5)/0.5
// (float32 arithmetic, as numpy does it), then the top-left crop_size x crop_size
// (crop_size <= resize_size). Returns float CHW [3, crop_size, crop_size].
std::vector<float> preprocess_siglip(const RgbImage& image, int resize_size, int crop_size);

// Any image input for the model, as float CHW [3, crop_size, crop_size]:
//   * "*.f32": exactly 3*crop*crop little-endian float32 values, already preprocessed;
//   * "*.npy" (or NumPy magic): float array of shape [3, crop, crop] or [1, 3, crop, crop],
//     already preprocessed;
//   * anything else: decode_image + preprocess_siglip.
// Wrong shape/size or a non-finite value throws Error naming the path and the value.
std::vector<float> load_image_input(const std::string& path, int resize_size, int crop_size);
// The same, decoding with preprocess_image for the config's preprocessing.
std::vector<float> load_image_input(const std::string& path, const model::ViTConfig& config);

}  // namespace tilevit::formats
