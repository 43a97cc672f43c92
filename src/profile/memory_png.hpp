#pragma once
// memory.png: an overview of a memory map (memory_map.hpp) for a glance or a report.
// One band of pixel rows per tile (logical order, top to bottom), SRAM address on x
// (a fixed number of bytes per pixel), each pixel coloured by the kind that covers most
// of its bytes over the whole program and shaded by how much of it is ever used; a
// legend, an address axis and dashed lines at region boundaries and the end of SRAM.
// Text uses a built-in 5x7 bitmap font. The bytes are deterministic (no time chunk,
// fixed compression), palette-indexed, about 0.1 to 1 MB for 1,472 tiles.
#include <cstddef>
#include <vector>

#include "profile/memory_map.hpp"

namespace tilevit::profile {

struct MemoryPngLayout {
  unsigned width = 0, height = 0;
  unsigned bytes_per_pixel = 0;  // SRAM bytes per pixel column
  unsigned rows_per_tile = 0;    // pixel rows per tile
  unsigned map_left = 0, map_top = 0;  // pixel of (start address, tile 0)
};

// The geometry render_memory_png uses for this map (tests check the PNG against it).
MemoryPngLayout memory_png_layout(const MemoryMap& memory_map);

// Encoded PNG bytes. Throws Error(kExitInternal) if libpng fails.
std::vector<std::byte> render_memory_png(const MemoryMap& memory_map);

}  // namespace tilevit::profile
