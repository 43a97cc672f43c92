// device_gemm's driver for the vector paths (device_gemm_tiles.hpp): column strips of
// whole register tiles, the inner extent in chunks, big GEMMs over OpenMP threads. None of
// it changes a result: each output element is still one accumulator that takes the
// products in increasing inner index (docs/NUMERICS.md).
#include <omp.h>

#include <algorithm>

#include "numerics/device_gemm_tiles.hpp"

namespace tilevit::numerics {
namespace {

// The inner-extent chunk, rounded to a multiple of the panel so chunk ends are panel ends.
constexpr int kChunk = 256;
constexpr int kChunkAbove = 384;  // inner extents up to this run in one chunk
// GEMMs with fewer multiply-adds run on the calling thread: the device model's (~10 per
// kernel call) are this small, and even an inactive parallel region sets up a team.
constexpr long kParallelAbove = 1L << 16;

}  // namespace

void gemm_in_strips(const DeviceGemm& g, int strip_width, int merge_last_up_to, GemmStrip strip) {
  if (g.rows <= 0 || g.columns <= 0) return;
  int strips = (g.columns + strip_width - 1) / strip_width;
  if (strips > 1 && g.columns - strip_width * (strips - 1) <= merge_last_up_to) --strips;
  const int chunk = g.inner <= kChunkAbove ? std::max(g.inner, 1)
                    : g.panel > 0          ? g.panel * std::max(1, kChunk / g.panel)
                                           : kChunk;
  const auto run_strip = [&](int i) {
    const int col = i * strip_width, width = i + 1 == strips ? g.columns - col : strip_width;
    for (int k0 = 0; k0 < std::max(g.inner, 1); k0 += chunk)
      strip(g, col, width, GemmSpan{k0, std::min(g.inner, k0 + chunk), k0 == 0, k0 + chunk >= g.inner});
  };
  if (strips > 1 && !omp_in_parallel() && static_cast<long>(g.rows) * g.columns * g.inner > kParallelAbove) {
#pragma omp parallel for schedule(static)
    for (int i = 0; i < strips; ++i) run_strip(i);
  } else {
    for (int i = 0; i < strips; ++i) run_strip(i);
  }
}

}  // namespace tilevit::numerics
