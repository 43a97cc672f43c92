// memory.png: a palette image drawn from the memory map (layout: memory_png.hpp).
#include "profile/memory_png.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <string>

#include "profile/memory_map.hpp"
#include "profile/png_canvas.hpp"
#include "support/error.hpp"

namespace tilevit::profile {
namespace {

// Palette: fixed entries, then each kind at four coverage levels (1/4 .. 4/4 of a pixel's bytes).
enum : std::uint8_t { kMargin, kFree, kText, kLine, kAxis, kFirstKindColour };
constexpr Rgb kFixed[] = {{255, 255, 255}, {232, 232, 232}, {34, 34, 34}, {0, 0, 0}, {150, 150, 150}};
// Same colours as the HTML viewer (web/memory.html), in MemoryKind order.
constexpr Rgb kKindColour[kMemoryKindCount] = {
    {78, 121, 167}, {242, 142, 43}, {225, 87, 89}, {156, 156, 156}, {89, 161, 79}};
constexpr unsigned kLevels = 4;

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llX", static_cast<unsigned long long>(v));
  return buf;
}

std::vector<std::byte> encode(const PaletteCanvas& canvas) {
  std::vector<Rgb> palette(std::begin(kFixed), std::end(kFixed));
  for (const auto& k : kKindColour)
    for (unsigned level = 1; level <= kLevels; ++level) {
      Rgb c{};
      for (int i = 0; i < 3; ++i)
        c[i] = static_cast<std::uint8_t>((kFixed[kFree][i] * (kLevels - level) + k[i] * level) / kLevels);
      palette.push_back(c);
    }
  return encode_palette_png(canvas, palette, "memory.png");
}

}  // namespace

MemoryPngLayout memory_png_layout(const MemoryMap& map) {
  MemoryPngLayout l;
  const std::uint64_t start = map.start, end = map.end;
  const std::uint64_t tiles = std::max<std::uint64_t>(map.tiles.size(), 1);
  const std::uint64_t span = end > start ? end - start : 1;
  // About 1,536 address columns: 416 B per pixel on the C600's 624 KiB.
  l.bytes_per_pixel = static_cast<unsigned>(std::max<std::uint64_t>((span + 1535) / 1536 + 15, 16) / 16 * 16);
  l.rows_per_tile = static_cast<unsigned>(std::clamp<std::uint64_t>(512 / tiles, 1, 16));
  l.map_left = 8 * kCharWidth;                         // "L1471 " plus a tick
  l.map_top = 5 * kCharHeight + 4;                     // title, legend, region names, axis labels, ticks
  l.width = l.map_left + static_cast<unsigned>((span + l.bytes_per_pixel - 1) / l.bytes_per_pixel) + 2 * kCharWidth;
  l.height = l.map_top + static_cast<unsigned>(tiles) * l.rows_per_tile + 4;
  return l;
}

namespace {

// Draws one map onto a canvas of its layout, part by part.
class MapPainter {
 public:
  explicit MapPainter(const MemoryMap& map)
      : map_(map),
        layout_(memory_png_layout(map)),
        start_(map.start),
        end_(map.end),
        columns_(static_cast<unsigned>((end_ - start_ + layout_.bytes_per_pixel - 1) / layout_.bytes_per_pixel)),
        canvas_(layout_.width, layout_.height) {}

  // Title, legend, address axis and region names.
  void header() {
    const std::string title = "tilevit memory map: " + map_subject(map_) + ", " + std::to_string(map_.tiles.size()) +
                              " tiles, " + std::to_string(layout_.bytes_per_pixel) + " B/px, x = address, y = tile";
    canvas_.text(2, 1, title, kText);
    unsigned x = 2;
    const unsigned legend_y = kCharHeight + 3;
    for (std::size_t k = 0; k < kMemoryKindCount; ++k) {
      canvas_.fill(x, legend_y, 7, 7, static_cast<std::uint8_t>(kFirstKindColour + k * kLevels + kLevels - 1));
      x = canvas_.text(x + 10, legend_y, std::string(to_string(static_cast<MemoryKind>(k))), kText) + 2 * kCharWidth;
    }
    canvas_.fill(x, legend_y, 7, 7, kFree);
    x = canvas_.text(x + 10, legend_y, "free", kText) + 2 * kCharWidth;
    canvas_.text(x, legend_y, "- - region boundary", kText);

    canvas_.fill(layout_.map_left, axis_y(), columns_, 1, kAxis);
    // Ticks at a power-of-two step (>= 4 KiB) leaving room for a label of 8 characters.
    std::uint64_t step = 0x1000;
    while (step / layout_.bytes_per_pixel < 9 * kCharWidth) step *= 2;
    for (std::uint64_t a = (start_ + step - 1) / step * step; a < end_; a += step) {
      canvas_.fill(x_of(a), axis_y() - 3, 1, 3, kAxis);
      const unsigned label_x = x_of(a) > layout_.map_left + 20 ? x_of(a) - 20 : layout_.map_left;
      canvas_.text(label_x, axis_y() - 3 - kCharHeight, hex(a), kText);
    }
    for (const auto& r : map_.regions) canvas_.text(x_of(r.start) + 3, 2 * kCharHeight + 5, r.name, kAxis);
  }

  // Tile rows: per pixel column, the bytes each kind covers (summed over the program) and
  // the bytes covered by anything (union), from which colour and shade follow.
  void tiles() {
    unsigned label_every = 1;
    while (label_every * layout_.rows_per_tile < kCharHeight + 2) label_every *= 2;
    for (std::size_t t = 0; t < map_.tiles.size(); ++t) {
      const MemoryTile& tile = map_.tiles[t];
      const unsigned y = layout_.map_top + static_cast<unsigned>(t) * layout_.rows_per_tile;
      tile_row(tile, y);
      if (t % label_every == 0) {
        canvas_.fill(layout_.map_left - 3, y, 2, 1, kAxis);
        const std::string label = "L" + std::to_string(tile.logical);
        canvas_.text(layout_.map_left - 4 - kCharWidth * static_cast<unsigned>(label.size()), y, label, kText);
      }
    }
  }

  // Dashed lines at every region boundary and at the end of SRAM.
  void boundaries() {
    std::vector<std::uint64_t> lines;
    for (const auto& r : map_.regions) {
      lines.push_back(r.start);
      lines.push_back(r.end);
    }
    lines.push_back(end_);
    std::sort(lines.begin(), lines.end());
    lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
    const unsigned map_bottom = layout_.map_top + static_cast<unsigned>(map_.tiles.size()) * layout_.rows_per_tile;
    for (const std::uint64_t a : lines) {
      if (a < start_ || a > end_) continue;
      const unsigned lx = std::min(x_of(a), layout_.map_left + columns_);
      for (unsigned y = axis_y() - 2; y < map_bottom + 2; ++y)
        if ((y / 3) % 2 == 0) canvas_.set(lx, y, kLine);
    }
  }

  const PaletteCanvas& canvas() const { return canvas_; }

 private:
  unsigned axis_y() const { return layout_.map_top - 3; }
  unsigned x_of(std::uint64_t address) const {
    return layout_.map_left + static_cast<unsigned>((address - start_) / layout_.bytes_per_pixel);
  }

  // Calls add(column, bytes) for the part of [from, to) in each pixel column.
  template <typename Add>
  void spread(std::uint64_t from, std::uint64_t to, Add&& add) const {
    from = std::max(from, start_);
    to = std::min(to, end_);
    while (from < to) {
      const std::uint64_t column = (from - start_) / layout_.bytes_per_pixel;
      const std::uint64_t column_end = std::min(to, start_ + (column + 1) * layout_.bytes_per_pixel);
      add(static_cast<std::size_t>(column), column_end - from);
      from = column_end;
    }
  }

  void tile_row(const MemoryTile& tile, unsigned y) {
    std::vector<std::array<std::uint64_t, kMemoryKindCount>> by_kind(columns_);
    std::vector<std::uint64_t> covered(columns_);
    std::vector<std::pair<std::uint64_t, std::uint64_t>> spans;
    constexpr auto kPadding = static_cast<std::size_t>(MemoryKind::padding);
    for (const MemoryEntry& a : tile.entries) {
      const std::uint64_t s = a.start, e = a.end;
      const auto k = static_cast<std::size_t>(a.kind);
      const std::uint64_t payload_end = std::min<std::uint64_t>(a.payload_end, e);
      spread(s, payload_end, [&](std::size_t c, std::uint64_t n) { by_kind[c][k] += n; });
      spread(payload_end, e, [&](std::size_t c, std::uint64_t n) { by_kind[c][kPadding] += n; });  // alignment tail
      spans.emplace_back(s, e);
    }
    std::sort(spans.begin(), spans.end());
    std::uint64_t cur = 0;
    for (const auto& [s, e] : spans) {
      const std::uint64_t from = std::max(cur, s);
      if (e > from) spread(from, e, [&](std::size_t c, std::uint64_t n) { covered[c] += n; });
      cur = std::max(cur, e);
    }
    for (unsigned c = 0; c < columns_; ++c) {
      std::uint8_t colour = kFree;
      if (covered[c] > 0) {
        const auto& b = by_kind[c];
        const std::size_t k = static_cast<std::size_t>(std::max_element(b.begin(), b.end()) - b.begin());
        const std::uint64_t column_start = start_ + std::uint64_t{c} * layout_.bytes_per_pixel;
        const std::uint64_t column_bytes = std::min<std::uint64_t>(layout_.bytes_per_pixel, end_ - column_start);
        const unsigned level = static_cast<unsigned>(
            std::clamp<std::uint64_t>((covered[c] * kLevels + column_bytes - 1) / column_bytes, 1, kLevels));
        colour = static_cast<std::uint8_t>(kFirstKindColour + k * kLevels + level - 1);
      }
      canvas_.fill(layout_.map_left + c, y, 1, layout_.rows_per_tile, colour);
    }
  }

  const MemoryMap& map_;
  const MemoryPngLayout layout_;
  const std::uint64_t start_, end_;
  const unsigned columns_;
  PaletteCanvas canvas_;
};

}  // namespace

std::vector<std::byte> render_memory_png(const MemoryMap& map) {
  MapPainter painter(map);
  painter.header();
  painter.tiles();
  painter.boundaries();
  return encode(painter.canvas());
}

}  // namespace tilevit::profile
