#pragma once
// A palette-indexed drawing surface with a built-in 5x7 bitmap font, and its PNG
// encoding (libpng, deterministic bytes: no time chunk, fixed compression). Shared by
// memory.png and the sweep's Pareto chart.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tilevit::profile {

inline constexpr unsigned kCharWidth = 6, kCharHeight = 8;  // a glyph cell, spacing included
using Rgb = std::array<std::uint8_t, 3>;

class PaletteCanvas {
 public:
  // Every pixel starts as palette entry `background`.
  PaletteCanvas(unsigned width, unsigned height, std::uint8_t background = 0);
  void set(unsigned x, unsigned y, std::uint8_t colour);  // outside the canvas: ignored
  void fill(unsigned x, unsigned y, unsigned w, unsigned h, std::uint8_t colour);
  // A one-pixel line between two points (Bresenham); coordinates may lie outside.
  void line(int x0, int y0, int x1, int y1, std::uint8_t colour);
  // Draws `text` with its top-left at (x, y); lower-case letters as capitals except 'x',
  // unknown characters as spaces. Returns the x after the last character.
  unsigned text(unsigned x, unsigned y, const std::string& text, std::uint8_t colour);
  const std::vector<std::uint8_t>& pixels() const { return pixels_; }
  unsigned width() const { return width_; }
  unsigned height() const { return height_; }

 private:
  unsigned width_, height_;
  std::vector<std::uint8_t> pixels_;
};

// Encoded PNG bytes with `palette` (at most 256 entries). Throws Error(kExitInternal)
// naming `what` if libpng fails.
std::vector<std::byte> encode_palette_png(const PaletteCanvas& canvas, const std::vector<Rgb>& palette,
                                          const std::string& what);

}  // namespace tilevit::profile
