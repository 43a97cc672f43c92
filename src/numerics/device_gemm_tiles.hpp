#pragma once
// What the vector GEMM paths share (device_gemm_avx2.cpp, device_gemm_avx512.cpp): the
// driver that cuts C into column strips and the inner extent into chunks, and how a
// register tile reads A. Per output element they perform the definition's operations
// (scalar::gemm_element) in its order; they only compute many elements side by side.
//
// Each path writes its register tile out itself: one template for both would need the
// AVX-512 intrinsics inlined into a function without AVX-512's target attribute, which
// GCC refuses, and a per-file -mavx512f would let the linker pick AVX-512 copies of
// shared inline functions for the AVX2 path. Within a tile the panel loop is a plain inner
// loop, rounding between panels rather than testing for a panel end at every step.
#include <cstddef>

#include "numerics/device_kernel_table.hpp"

namespace tilevit::numerics {

// The inner indices [k0, k1) one pass over a strip covers.
struct GemmSpan {
  int k0, k1;
  bool first, last;  // first: the accumulators start at 0, else from C; last: write the result
};

// A strip kernel: C's columns [col, col + width) over one span, all rows.
using GemmStrip = void (*)(const DeviceGemm& g, int col, int width, const GemmSpan& span);

// Runs `strip` over C in strips of `strip_width` columns (a last strip of at most
// `merge_last_up_to` columns joins the one before) and over the inner extent in chunks
// that end on panel boundaries. Between chunks the FP32 accumulators are parked in C (a
// float stored and reloaded is the same float), which keeps a chunk of B in cache for
// the host reference's big GEMMs.
void gemm_in_strips(const DeviceGemm& g, int strip_width, int merge_last_up_to, GemmStrip strip);

namespace scalar {
// One element of C over `span`, as defined (device_kernels_scalar.cpp): the vector
// paths' leftover columns.
void gemm_element(const DeviceGemm& g, int row, int col, const GemmSpan& span);
}  // namespace scalar

// How A is stored: floats, FP8 codes looked up in the decode table (two loads, no
// arithmetic: the FMA ports stay free), or floats transposed (A^T row-major).
enum class AKind { floats, codes, transposed };

// Element (row + r, k) of A, with a0 = a_origin(g, row).
template <AKind kA>
inline float a_value(const DeviceGemm& g, std::size_t a0, std::size_t r, std::size_t k, std::size_t lda) {
  if constexpr (kA == AKind::codes) return g.a_table[g.a_codes[a0 + r * lda + k]];
  if constexpr (kA == AKind::transposed) return g.a[a0 + k * lda + r];
  return g.a[a0 + r * lda + k];
}
template <AKind kA>
inline std::size_t a_origin(const DeviceGemm& g, int row) {
  return kA == AKind::transposed ? static_cast<std::size_t>(row) : static_cast<std::size_t>(row) * g.lda;
}

// Calls `run` with A's storage as a compile-time constant.
template <class Run>
inline void with_a_kind(const DeviceGemm& g, Run&& run) {
  if (g.a_codes)
    run.template operator()<AKind::codes>();
  else if (g.a_transposed)
    run.template operator()<AKind::transposed>();
  else
    run.template operator()<AKind::floats>();
}

}  // namespace tilevit::numerics
