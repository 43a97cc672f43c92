// PNG/JPEG decoding through libpng and libjpeg-turbo, converted like Pillow 9.4's
// Image.open(path).convert("RGB"), plus load_image_input. The bicubic resize and the
// SigLIP normalisation live in image_resize.cpp.
//
// Both C libraries report fatal errors by longjmp. Each decoder therefore runs in a
// C-style function (png_decode_raw / jpeg_decode_raw) that owns no object with a
// destructor and keeps its library state in a caller-owned context, so a longjmp only
// ever crosses libpng/libjpeg frames and our trivial callbacks. The error/warning
// handlers copy the library's text into the context and never print to stderr.
#include "formats/image.hpp"

#include <png.h>
#include <cstdio>  // jpeglib.h needs FILE and size_t declared first
#include <jpeglib.h>
#include <jerror.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <csetjmp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <sstream>

#include "formats/npy.hpp"
#include "support/error.hpp"

namespace tilevit::formats {
namespace {

constexpr std::uintmax_t kMaxImageFileBytes = std::uintmax_t{1} << 30;  // 1 GiB
constexpr png_alloc_size_t kMaxPngChunkBytes = 8'000'000;  // libpng's documented default
constexpr png_uint_32 kMaxPngChunks = 1000;                // ancillary chunks kept (text, sPLT, unknown)
constexpr std::uint8_t kPngMagic[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
constexpr std::uint8_t kJpegMagic[3] = {0xFF, 0xD8, 0xFF};
constexpr char kNpyMagic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

// Library messages go into one-line errors: drop control characters.
std::string one_line(const char* text) {
  std::string out;
  for (const char* p = text; *p; ++p) out += (static_cast<unsigned char>(*p) < 0x20) ? ' ' : *p;
  return out;
}

std::vector<std::uint8_t> read_file(const std::string& path, const char* what) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) throw Error(path + ": cannot read " + what + ": " + ec.message());
  if (size > kMaxImageFileBytes)
    throw Error(path + ": " + what + " is " + std::to_string(size) + " bytes, over the limit of " +
                std::to_string(kMaxImageFileBytes));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open " + what);
  std::vector<std::uint8_t> data(static_cast<std::size_t>(size));
  if (size > 0 && !in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(size)))
    throw Error(path + ": cannot read " + what + " (" + std::to_string(size) + " bytes expected)");
  return data;
}

// Empty string when the dimensions are acceptable, otherwise the reason.
std::string check_dimensions(std::uint64_t width, std::uint64_t height) {
  if (width == 0 || height == 0)
    return "image has zero size " + std::to_string(width) + "x" + std::to_string(height);
  if (width > kMaxImageSide || height > kMaxImageSide)
    return "image size " + std::to_string(width) + "x" + std::to_string(height) + " exceeds the limit of " +
           std::to_string(kMaxImageSide) + " per side";
  if (width * height > static_cast<std::uint64_t>(kMaxImagePixels))
    return "image size " + std::to_string(width) + "x" + std::to_string(height) + " = " +
           std::to_string(width * height) + " pixels exceeds the limit of " + std::to_string(kMaxImagePixels);
  return {};
}

// Decoded samples before the conversion to RGB.
struct RawImage {
  std::uint32_t width = 0, height = 0;
  int channels = 0;   // 1 (grey), 3 (RGB), 4 (RGBA or CMYK)
  int bit_depth = 8;  // 16 only for 16-bit grey PNG (big-endian samples)
  bool cmyk = false;
  std::vector<std::uint8_t> samples;
};

// Shared by both decoders: a fixed-size message buffer (no std::string inside the
// longjmp region) and the caller's output.
struct DecodeContext {
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
  std::size_t pos = 0;
  char message[512] = {};
  RawImage* out = nullptr;
};

void set_message(DecodeContext* ctx, const char* text) {
  std::snprintf(ctx->message, sizeof ctx->message, "%s", text);
}

// Checks dimensions and sizes the output; false (with ctx->message) on failure. Called
// from inside the longjmp regions, so it must not throw.
bool prepare_output(DecodeContext* ctx, std::uint64_t width, std::uint64_t height, std::size_t row_bytes) noexcept {
  try {
    const std::string reason = check_dimensions(width, height);
    if (!reason.empty()) {
      set_message(ctx, reason.c_str());
      return false;
    }
    ctx->out->width = static_cast<std::uint32_t>(width);
    ctx->out->height = static_cast<std::uint32_t>(height);
    ctx->out->samples.resize(row_bytes * height);
    return true;
  } catch (const std::bad_alloc&) {
    set_message(ctx, "out of memory for the decoded pixels");
    return false;
  }
}

// ------------------------------------------------------------------------------ PNG

[[noreturn]] void png_error_handler(png_structp png, png_const_charp message) {
  auto* ctx = static_cast<DecodeContext*>(png_get_error_ptr(png));
  set_message(ctx, message ? message : "unknown libpng error");
  png_longjmp(png, 1);
}

void png_warning_handler(png_structp, png_const_charp) {}  // Pillow ignores these too

void png_read_handler(png_structp png, png_bytep out, std::size_t count) {
  auto* ctx = static_cast<DecodeContext*>(png_get_io_ptr(png));
  if (count > ctx->size - ctx->pos) png_error(png, "unexpected end of file (truncated PNG)");
  std::memcpy(out, ctx->data + ctx->pos, count);
  ctx->pos += count;
}

// C-style on purpose (see the file comment): only trivially destructible locals.
bool png_decode_raw(DecodeContext* ctx) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, ctx, png_error_handler, png_warning_handler);
  if (!png) {
    set_message(ctx, "cannot create the libpng read structure");
    return false;
  }
  png_infop info = png_create_info_struct(png);
  if (!info) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    set_message(ctx, "cannot create the libpng info structure");
    return false;
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    return false;
  }
  png_set_read_fn(png, ctx, png_read_handler);
  // libpng's own limits: the header's dimensions and every ancillary chunk it inflates.
  png_set_user_limits(png, kMaxImageSide, kMaxImageSide);
  png_set_chunk_malloc_max(png, kMaxPngChunkBytes);
  png_set_chunk_cache_max(png, kMaxPngChunks);
  png_read_info(png, info);

  const png_uint_32 width = png_get_image_width(png, info);
  const png_uint_32 height = png_get_image_height(png, info);
  const int color_type = png_get_color_type(png, info);
  const int depth = png_get_bit_depth(png, info);
  // Pillow opens 16-bit grey as mode "I" and clips it to 0..255 in convert("RGB"); every
  // other 16-bit layout keeps the high byte ("RGB;16B", "LA;16B", "RGBA;16B" unpackers).
  const bool grey16 = color_type == PNG_COLOR_TYPE_GRAY && depth == 16;
  if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);  // may add alpha from tRNS
  if (color_type == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (depth == 16 && !grey16) png_set_strip_16(png);  // truncates, as Pillow does
  if (!grey16 && (color_type == PNG_COLOR_TYPE_GRAY || color_type == PNG_COLOR_TYPE_GRAY_ALPHA))
    png_set_gray_to_rgb(png);
  const int passes = png_set_interlace_handling(png);
  png_read_update_info(png, info);

  const int channels = png_get_channels(png, info);
  const int out_depth = png_get_bit_depth(png, info);
  const std::size_t row_bytes = png_get_rowbytes(png, info);
  const bool layout_ok = (channels == 1 && out_depth == 16 && grey16) ||
                         ((channels == 3 || channels == 4) && out_depth == 8 && !grey16);
  if (!layout_ok) {
    std::snprintf(ctx->message, sizeof ctx->message, "unexpected PNG layout (%d channels, %d bits) after expansion",
                  channels, out_depth);
    png_destroy_read_struct(&png, &info, nullptr);
    return false;
  }
  if (row_bytes != std::size_t{width} * channels * (out_depth / 8) || !prepare_output(ctx, width, height, row_bytes)) {
    if (!ctx->message[0]) set_message(ctx, "inconsistent PNG row size");
    png_destroy_read_struct(&png, &info, nullptr);
    return false;
  }
  ctx->out->channels = channels;
  ctx->out->bit_depth = out_depth;
  // Row by row for every Adam7 pass: libpng merges the passes into the same rows.
  std::uint8_t* base = ctx->out->samples.data();
  for (int pass = 0; pass < passes; ++pass)
    for (png_uint_32 y = 0; y < height; ++y) png_read_row(png, base + std::size_t{y} * row_bytes, nullptr);
  // No png_read_end: like Pillow, accept a file whose chunks after the image data are
  // missing or damaged once every pixel has been decoded.
  png_destroy_read_struct(&png, &info, nullptr);
  return true;
}

// ------------------------------------------------------------------------------ JPEG

struct JpegContext {
  DecodeContext* base = nullptr;
  jpeg_decompress_struct cinfo{};  // zeroed: jpeg_destroy_decompress is safe even if create failed
  jpeg_error_mgr err{};
  jpeg_progress_mgr progress{};
  std::jmp_buf jump{};
};

// Each scan of a progressive file is a pass over the whole image: without a bound, a
// small file of many empty scans keeps the decoder busy for minutes (libjpeg-turbo's
// djpeg -maxscans guards the same way).
constexpr int kMaxJpegScans = 1000;

[[noreturn]] void jpeg_error_handler(j_common_ptr cinfo) {
  auto* ctx = static_cast<JpegContext*>(cinfo->client_data);
  const int code = cinfo->err->msg_code;
  if (cinfo->is_decompressor && (code == JERR_NO_BACKING_STORE || code == JERR_OUT_OF_MEMORY)) {  // over the cap
    const auto* d = reinterpret_cast<j_decompress_ptr>(cinfo);
    std::snprintf(ctx->base->message, sizeof ctx->base->message,
                  "image size %ux%u (%d components%s) needs more than the decoding limit of %lld MiB",
                  d->image_width, d->image_height, d->num_components, d->progressive_mode ? ", progressive" : "",
                  static_cast<long long>(kMaxDecodeBytes >> 20));
  } else {
    char text[JMSG_LENGTH_MAX];
    (*cinfo->err->format_message)(cinfo, text);
    set_message(ctx->base, text);
  }
  std::longjmp(ctx->jump, 1);
}

// Warnings (corrupt-data notes) are ignored, as Pillow ignores them, except running off
// the end of the data: libjpeg would then pad with grey, Pillow reports truncation.
void jpeg_emit_handler(j_common_ptr cinfo, int level) {
  if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) jpeg_error_handler(cinfo);
}

void jpeg_output_handler(j_common_ptr) {}

void jpeg_progress_handler(j_common_ptr cinfo) {
  const auto* d = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (d->input_scan_number <= kMaxJpegScans) return;
  auto* ctx = static_cast<JpegContext*>(cinfo->client_data);
  std::snprintf(ctx->base->message, sizeof ctx->base->message, "more than %d scans", kMaxJpegScans);
  std::longjmp(ctx->jump, 1);
}

bool jpeg_decode_raw(JpegContext* jc) {
  DecodeContext* ctx = jc->base;
  jc->cinfo.err = jpeg_std_error(&jc->err);
  jc->err.error_exit = jpeg_error_handler;
  jc->err.emit_message = jpeg_emit_handler;
  jc->err.output_message = jpeg_output_handler;
  jc->progress.progress_monitor = jpeg_progress_handler;
  jc->cinfo.client_data = jc;
  if (setjmp(jc->jump)) {
    jpeg_destroy_decompress(&jc->cinfo);
    return false;
  }
  jpeg_create_decompress(&jc->cinfo);
  jc->cinfo.progress = &jc->progress;
  jpeg_mem_src(&jc->cinfo, ctx->data, static_cast<unsigned long>(ctx->size));
  jpeg_read_header(&jc->cinfo, TRUE);

  // Pillow: 1 component -> "L", 3 -> "RGB" (libjpeg converts YCbCr), 4 -> "CMYK"
  // (libjpeg converts YCCK; samples are Adobe-inverted).
  const int components = jc->cinfo.num_components;
  if (components == 1) {
    jc->cinfo.out_color_space = JCS_GRAYSCALE;
  } else if (components == 3) {
    jc->cinfo.out_color_space = JCS_RGB;
  } else if (components == 4) {
    jc->cinfo.out_color_space = JCS_CMYK;
  } else {
    std::snprintf(ctx->message, sizeof ctx->message, "unsupported JPEG with %d components", components);
    jpeg_destroy_decompress(&jc->cinfo);
    return false;
  }
  // Checked before jpeg_start_decompress, which allocates the (possibly whole-image) buffers.
  const std::uint64_t width = jc->cinfo.image_width;
  const std::uint64_t height = jc->cinfo.image_height;
  if (!prepare_output(ctx, width, height, 0)) {
    jpeg_destroy_decompress(&jc->cinfo);
    return false;
  }
  // libjpeg's own buffers (a progressive or multi-scan file keeps every coefficient of
  // the image) get what the decode budget leaves after our samples and the RGB copy.
  const std::uint64_t our_bytes = width * height * (components + (components == 3 ? 0 : 3));
  jc->cinfo.mem->max_memory_to_use = static_cast<long>(kMaxDecodeBytes - static_cast<std::int64_t>(our_bytes));
  jpeg_start_decompress(&jc->cinfo);
  const int out_components = jc->cinfo.output_components;
  const std::size_t row_bytes = std::size_t{jc->cinfo.output_width} * out_components;
  if (jc->cinfo.output_width != width || jc->cinfo.output_height != height || out_components != components ||
      !prepare_output(ctx, width, height, row_bytes)) {
    if (!ctx->message[0]) set_message(ctx, "unexpected JPEG output geometry");
    jpeg_destroy_decompress(&jc->cinfo);
    return false;
  }
  ctx->out->channels = out_components;
  ctx->out->cmyk = components == 4;
  std::uint8_t* base = ctx->out->samples.data();
  while (jc->cinfo.output_scanline < jc->cinfo.output_height) {
    JSAMPROW row = base + std::size_t{jc->cinfo.output_scanline} * row_bytes;
    jpeg_read_scanlines(&jc->cinfo, &row, 1);
  }
  // No jpeg_finish_decompress: Pillow accepts a file whose EOI is missing once all
  // scanlines are out; destroying aborts cleanly.
  jpeg_destroy_decompress(&jc->cinfo);
  return true;
}

// ------------------------------------------------------------------------------ to RGB

inline std::uint8_t clip8(int v) { return static_cast<std::uint8_t>(std::clamp(v, 0, 255)); }

// Pillow's MULDIV255: a * b / 255 rounded, with integer arithmetic only.
inline int muldiv255(int a, int b) {
  const int t = a * b + 128;
  return ((t >> 8) + t) >> 8;
}

RgbImage to_rgb(RawImage& raw) {
  RgbImage image;
  image.width = static_cast<int>(raw.width);
  image.height = static_cast<int>(raw.height);
  const std::size_t count = std::size_t{raw.width} * raw.height;
  if (raw.channels == 3 && raw.bit_depth == 8) {  // the common case: no copy
    image.pixels = std::move(raw.samples);
    return image;
  }
  image.pixels.resize(count * 3);
  const std::uint8_t* in = raw.samples.data();
  std::uint8_t* out = image.pixels.data();
  for (std::size_t i = 0; i < count; ++i, out += 3) {
    if (raw.channels == 1 && raw.bit_depth == 16) {  // mode "I": clip to 0..255
      const int v = (in[2 * i] << 8) | in[2 * i + 1];
      out[0] = out[1] = out[2] = static_cast<std::uint8_t>(std::min(v, 255));
    } else if (raw.channels == 1) {
      out[0] = out[1] = out[2] = in[i];
    } else if (raw.cmyk) {  // "CMYK;I" (inverted) then Pillow's cmyk2rgb
      const std::uint8_t* p = in + 4 * i;
      const int c = 255 - p[0], m = 255 - p[1], y = 255 - p[2], k = 255 - p[3];
      const int nk = 255 - k;
      out[0] = clip8(nk - muldiv255(c, nk));
      out[1] = clip8(nk - muldiv255(m, nk));
      out[2] = clip8(nk - muldiv255(y, nk));
    } else {  // RGBA: alpha dropped, not composited
      std::memcpy(out, in + 4 * i, 3);
    }
  }
  return image;
}

// ------------------------------------------------------------------------------ inputs

std::string lower_extension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

bool has_npy_magic(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[sizeof kNpyMagic] = {};
  return in && in.read(head, sizeof head) && std::memcmp(head, kNpyMagic, sizeof head) == 0;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

void check_finite(const std::string& path, const std::vector<float>& values, int crop) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::isfinite(values[i])) continue;
    const std::size_t plane = std::size_t(crop) * crop;
    std::ostringstream msg;
    msg << path << ": non-finite value " << values[i] << " at index " << i << " (channel " << i / plane << ", row "
        << (i % plane) / crop << ", column " << i % crop << ")";
    throw Error(msg.str());
  }
}

}  // namespace

RgbImage decode_image(const std::string& path) {
  std::vector<std::uint8_t> data = read_file(path, "image file");
  DecodeContext ctx;
  ctx.data = data.data();
  ctx.size = data.size();
  RawImage raw;
  ctx.out = &raw;
  bool ok = false;
  const char* kind = nullptr;
  if (data.size() >= sizeof kPngMagic && std::memcmp(data.data(), kPngMagic, sizeof kPngMagic) == 0) {
    kind = "PNG";
    // IHDR always comes first at a fixed offset: check its dimensions ourselves, because
    // libpng reports a zero or oversized dimension only as "Invalid IHDR data".
    if (data.size() >= 24 && std::memcmp(data.data() + 12, "IHDR", 4) == 0) {
      const auto be32 = [&](std::size_t at) {
        return std::uint64_t{data[at]} << 24 | std::uint64_t{data[at + 1]} << 16 | std::uint64_t{data[at + 2]} << 8 |
               data[at + 3];
      };
      const std::string reason = check_dimensions(be32(16), be32(20));
      if (!reason.empty()) throw Error(path + ": cannot decode PNG: " + reason);
    }
    ok = png_decode_raw(&ctx);
  } else if (data.size() >= sizeof kJpegMagic && std::memcmp(data.data(), kJpegMagic, sizeof kJpegMagic) == 0) {
    kind = "JPEG";
    JpegContext jc;
    jc.base = &ctx;
    ok = jpeg_decode_raw(&jc);
  } else {
    char head[64] = {};
    int n = 0;
    for (std::size_t i = 0; i < std::min<std::size_t>(data.size(), 8); ++i)
      n += std::snprintf(head + n, sizeof head - n, "%s%02x", i ? " " : "", data[i]);
    throw Error(path + ": not a PNG or JPEG image (" + std::to_string(data.size()) + " bytes, first bytes [" + head +
                "])");
  }
  if (!ok) throw Error(path + ": cannot decode " + kind + ": " + one_line(ctx.message));
  return to_rgb(raw);
}

namespace {

// Preprocessed tensors as they are; encoded images through `config`'s preprocessing
// (SigLIP's for the plain overload).
std::vector<float> load_input(const std::string& path, int resize_size, int crop_size, const model::ViTConfig* config) {
  if (resize_size <= 0 || crop_size <= 0 || crop_size > resize_size || resize_size > kMaxImageSide)
    throw Error(path + ": invalid preprocessing sizes resize " + std::to_string(resize_size) + ", crop " +
                std::to_string(crop_size));
  const std::size_t crop = static_cast<std::size_t>(crop_size);
  const std::size_t expected = 3 * crop * crop;
  const std::string ext = lower_extension(path);
  if (ext == ".f32") {
    const std::vector<std::uint8_t> bytes = read_file(path, "raw float32 input");
    if (bytes.size() != expected * 4)
      throw Error(path + ": raw .f32 input has " + std::to_string(bytes.size()) + " bytes, expected 3*" +
                  std::to_string(crop) + "*" + std::to_string(crop) + "*4 = " + std::to_string(expected * 4));
    std::vector<float> values(expected);
    for (std::size_t i = 0; i < expected; ++i) {  // little-endian regardless of the host
      const std::uint8_t* p = bytes.data() + 4 * i;
      const std::uint32_t bits = std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 |
                                 std::uint32_t{p[3]} << 24;
      std::memcpy(&values[i], &bits, 4);
    }
    check_finite(path, values, crop_size);
    return values;
  }
  if (ext == ".npy" || has_npy_magic(path)) {
    NpyArray array = read_npy(path);
    const auto& s = array.shape;
    const auto c = static_cast<std::int64_t>(crop);
    const bool chw = s.size() == 3 && s[0] == 3 && s[1] == c && s[2] == c;
    const bool nchw = s.size() == 4 && s[0] == 1 && s[1] == 3 && s[2] == c && s[3] == c;
    if (!chw && !nchw)
      throw Error(path + ": npy shape " + shape_text(s) + " is not (3, " + std::to_string(c) + ", " +
                  std::to_string(c) + ") or (1, 3, " + std::to_string(c) + ", " + std::to_string(c) + ")");
    if (array.data.size() != expected)
      throw Error(path + ": npy holds " + std::to_string(array.data.size()) + " values, expected " +
                  std::to_string(expected));
    check_finite(path, array.data, crop_size);
    return std::move(array.data);
  }
  return config ? preprocess_image(decode_image(path), *config) : preprocess_siglip(decode_image(path), resize_size, crop_size);
}

}  // namespace

std::vector<float> load_image_input(const std::string& path, int resize_size, int crop_size) {
  return load_input(path, resize_size, crop_size, nullptr);
}

std::vector<float> load_image_input(const std::string& path, const model::ViTConfig& config) {
  return load_input(path, config.resize_size, config.image_size, &config);
}

}  // namespace tilevit::formats
