#include "profile/png_canvas.hpp"

#include <png.h>

#include <cstdlib>
#include <csetjmp>

#include "support/error.hpp"

namespace tilevit::profile {
namespace {

// 5x7 glyphs, one byte per column, bit 0 = top row (the classic LCD font). Lower-case
// letters are drawn as capitals except 'x' (for "0x").
struct Glyph {
  char c;
  std::array<std::uint8_t, 5> columns;
};
constexpr Glyph kFont[] = {
    {'0', {0x3E, 0x51, 0x49, 0x45, 0x3E}}, {'1', {0x00, 0x42, 0x7F, 0x40, 0x00}}, {'2', {0x42, 0x61, 0x51, 0x49, 0x46}},
    {'3', {0x21, 0x41, 0x45, 0x4B, 0x31}}, {'4', {0x18, 0x14, 0x12, 0x7F, 0x10}}, {'5', {0x27, 0x45, 0x45, 0x45, 0x39}},
    {'6', {0x3C, 0x4A, 0x49, 0x49, 0x30}}, {'7', {0x01, 0x71, 0x09, 0x05, 0x03}}, {'8', {0x36, 0x49, 0x49, 0x49, 0x36}},
    {'9', {0x06, 0x49, 0x49, 0x29, 0x1E}}, {'A', {0x7E, 0x11, 0x11, 0x11, 0x7E}}, {'B', {0x7F, 0x49, 0x49, 0x49, 0x36}},
    {'C', {0x3E, 0x41, 0x41, 0x41, 0x22}}, {'D', {0x7F, 0x41, 0x41, 0x22, 0x1C}}, {'E', {0x7F, 0x49, 0x49, 0x49, 0x41}},
    {'F', {0x7F, 0x09, 0x09, 0x09, 0x01}}, {'G', {0x3E, 0x41, 0x49, 0x49, 0x7A}}, {'H', {0x7F, 0x08, 0x08, 0x08, 0x7F}},
    {'I', {0x00, 0x41, 0x7F, 0x41, 0x00}}, {'J', {0x20, 0x40, 0x41, 0x3F, 0x01}}, {'K', {0x7F, 0x08, 0x14, 0x22, 0x41}},
    {'L', {0x7F, 0x40, 0x40, 0x40, 0x40}}, {'M', {0x7F, 0x02, 0x0C, 0x02, 0x7F}}, {'N', {0x7F, 0x04, 0x08, 0x10, 0x7F}},
    {'O', {0x3E, 0x41, 0x41, 0x41, 0x3E}}, {'P', {0x7F, 0x09, 0x09, 0x09, 0x06}}, {'Q', {0x3E, 0x41, 0x51, 0x21, 0x5E}},
    {'R', {0x7F, 0x09, 0x19, 0x29, 0x46}}, {'S', {0x46, 0x49, 0x49, 0x49, 0x31}}, {'T', {0x01, 0x01, 0x7F, 0x01, 0x01}},
    {'U', {0x3F, 0x40, 0x40, 0x40, 0x3F}}, {'V', {0x1F, 0x20, 0x40, 0x20, 0x1F}}, {'W', {0x3F, 0x40, 0x38, 0x40, 0x3F}},
    {'X', {0x63, 0x14, 0x08, 0x14, 0x63}}, {'Y', {0x07, 0x08, 0x70, 0x08, 0x07}}, {'Z', {0x61, 0x51, 0x49, 0x45, 0x43}},
    {'x', {0x44, 0x28, 0x10, 0x28, 0x44}}, {'.', {0x00, 0x60, 0x60, 0x00, 0x00}}, {',', {0x00, 0x50, 0x30, 0x00, 0x00}},
    {':', {0x00, 0x36, 0x36, 0x00, 0x00}}, {'-', {0x08, 0x08, 0x08, 0x08, 0x08}}, {'/', {0x20, 0x10, 0x08, 0x04, 0x02}},
    {'(', {0x00, 0x1C, 0x22, 0x41, 0x00}}, {')', {0x00, 0x41, 0x22, 0x1C, 0x00}}, {'%', {0x23, 0x13, 0x08, 0x64, 0x62}},
    {'=', {0x14, 0x14, 0x14, 0x14, 0x14}}, {'_', {0x40, 0x40, 0x40, 0x40, 0x40}}, {'+', {0x08, 0x08, 0x3E, 0x08, 0x08}},
};

const Glyph* glyph(char c) {
  if (c >= 'a' && c <= 'z' && c != 'x') c = static_cast<char>(c - 'a' + 'A');
  for (const Glyph& g : kFont)
    if (g.c == c) return &g;
  return nullptr;  // drawn as a space
}

}  // namespace

PaletteCanvas::PaletteCanvas(unsigned width, unsigned height, std::uint8_t background)
    : width_(width), height_(height), pixels_(std::size_t{width} * height, background) {}

void PaletteCanvas::set(unsigned x, unsigned y, std::uint8_t colour) {
  if (x < width_ && y < height_) pixels_[std::size_t{y} * width_ + x] = colour;
}

void PaletteCanvas::fill(unsigned x, unsigned y, unsigned w, unsigned h, std::uint8_t colour) {
  for (unsigned j = 0; j < h; ++j)
    for (unsigned i = 0; i < w; ++i) set(x + i, y + j, colour);
}

void PaletteCanvas::line(int x0, int y0, int x1, int y1, std::uint8_t colour) {
  const int dx = std::abs(x1 - x0), dy = -std::abs(y1 - y0);
  const int sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
  for (int err = dx + dy;;) {
    if (x0 >= 0 && y0 >= 0) set(static_cast<unsigned>(x0), static_cast<unsigned>(y0), colour);
    if (x0 == x1 && y0 == y1) return;
    const int e2 = 2 * err;
    if (e2 >= dy) {
      err += dy;
      x0 += sx;
    }
    if (e2 <= dx) {
      err += dx;
      y0 += sy;
    }
  }
}

unsigned PaletteCanvas::text(unsigned x, unsigned y, const std::string& s, std::uint8_t colour) {
  for (char ch : s) {
    if (const Glyph* g = glyph(ch))
      for (unsigned i = 0; i < 5; ++i)
        for (unsigned j = 0; j < 7; ++j)
          if (g->columns[i] >> j & 1) set(x + i, y + j, colour);
    x += kCharWidth;
  }
  return x;
}

std::vector<std::byte> encode_palette_png(const PaletteCanvas& canvas, const std::vector<Rgb>& palette,
                                          const std::string& what) {
  if (palette.empty() || palette.size() > 256) throw Error(what + ": a PNG palette holds 1 to 256 colours", kExitInternal);
  std::vector<std::byte> out;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!png || !info) {
    png_destroy_write_struct(&png, &info);
    throw Error(what + ": libpng initialisation failed", kExitInternal);
  }
  std::vector<png_bytep> rows(canvas.height());
  std::vector<png_color> colours;
  for (const Rgb& c : palette) colours.push_back({c[0], c[1], c[2]});
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    throw Error(what + ": libpng failed to encode the image", kExitInternal);
  }
  png_set_write_fn(
      png, &out,
      [](png_structp p, png_bytep data, png_size_t n) {
        auto* v = static_cast<std::vector<std::byte>*>(png_get_io_ptr(p));
        const auto* b = reinterpret_cast<const std::byte*>(data);
        v->insert(v->end(), b, b + n);
      },
      nullptr);
  png_set_IHDR(png, info, canvas.width(), canvas.height(), 8, PNG_COLOR_TYPE_PALETTE, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_set_PLTE(png, info, colours.data(), static_cast<int>(colours.size()));
  png_set_compression_level(png, 9);
  png_set_filter(png, 0, PNG_FILTER_NONE);  // best for a palette image
  for (unsigned y = 0; y < canvas.height(); ++y)
    rows[y] = const_cast<png_bytep>(canvas.pixels().data() + std::size_t{y} * canvas.width());
  png_set_rows(png, info, rows.data());
  png_write_png(png, info, PNG_TRANSFORM_IDENTITY, nullptr);
  png_destroy_write_struct(&png, &info);
  return out;
}

}  // namespace tilevit::profile
