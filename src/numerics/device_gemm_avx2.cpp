// device_gemm on 8 lanes (AVX2 and FMA): register tiles of R rows x C vectors of 8
// columns, each lane one output element with the definition's operations in its order
// (device_gemm_tiles.hpp); columns left over by whole vectors (AVX2 has no cheap masks)
// go through the definition itself.
#include <immintrin.h>

#include <algorithm>
#include <cstddef>

#include "numerics/device_gemm_tiles.hpp"

namespace tilevit::numerics::avx2 {
namespace {

template <int R, int C>
inline void round_all(__m256 (&acc)[R][C]) {
  TV_UNROLL
  for (int r = 0; r < R; ++r)
    TV_UNROLL
    for (int c = 0; c < C; ++c)
      acc[r][c] = _mm256_cvtph_ps(_mm256_cvtps_ph(acc[r][c], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

template <int R, int C>
inline void store_fp16(const DeviceGemm& g, int row, int col, __m256 (&acc)[R][C]) {
  TV_UNROLL
  for (int r = 0; r < R; ++r)
    TV_UNROLL
    for (int c = 0; c < C; ++c)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(g.c_fp16 + static_cast<std::size_t>(row + r) * g.ldc_fp16 + col + 8 * c),
                       _mm256_cvtps_ph(acc[r][c], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// C[row, row + R) x [col, col + 8 C) over the span.
template <int R, int C, AKind kA>
void tile(const DeviceGemm& g, int row, int col, const GemmSpan& s) {
  __m256 acc[R][C];
  float* out = g.c + static_cast<std::size_t>(row) * g.ldc + col;
  TV_UNROLL
  for (int r = 0; r < R; ++r)
    TV_UNROLL
    for (int c = 0; c < C; ++c)
      acc[r][c] = s.first ? _mm256_setzero_ps() : _mm256_loadu_ps(out + static_cast<std::size_t>(r) * g.ldc + 8 * c);
  const std::size_t a0 = a_origin<kA>(g, row);
  const std::size_t lda = static_cast<std::size_t>(g.lda), ldb = static_cast<std::size_t>(g.ldb);
  const int step = g.panel > 0 ? g.panel : s.k1 - s.k0;
  // Binary16 output: the conversion that stores is the last panel's rounding.
  const bool bits = s.last && g.c_fp16;
  for (int k0 = s.k0; k0 < s.k1; k0 += step) {
    const int k1 = std::min(s.k1, k0 + step);
    for (int k = k0; k < k1; ++k) {
      const float* brow = g.b + static_cast<std::size_t>(k) * ldb + col;
      __m256 b[C];
      TV_UNROLL
      for (int c = 0; c < C; ++c) b[c] = _mm256_loadu_ps(brow + 8 * c);
      TV_UNROLL
      for (int r = 0; r < R; ++r) {
        const __m256 av = _mm256_set1_ps(a_value<kA>(g, a0, r, k, lda));
        TV_UNROLL
        for (int c = 0; c < C; ++c) acc[r][c] = _mm256_fmadd_ps(av, b[c], acc[r][c]);
      }
    }
    if (g.panel > 0 && !(bits && k1 == s.k1)) round_all<R, C>(acc);
  }
  if (bits) return store_fp16<R, C>(g, row, col, acc);
  if (s.last && g.round_output) round_all<R, C>(acc);
  TV_UNROLL
  for (int r = 0; r < R; ++r)
    TV_UNROLL
    for (int c = 0; c < C; ++c) _mm256_storeu_ps(out + static_cast<std::size_t>(r) * g.ldc + 8 * c, acc[r][c]);
}

// All rows of C vectors of columns: tiles of 6 rows (6 x 2 = 12 accumulators of 16
// registers), then single rows.
template <int C, AKind kA>
void rows(const DeviceGemm& g, int col, const GemmSpan& s) {
  int row = 0;
  for (; row + 6 <= g.rows; row += 6) tile<6, C, kA>(g, row, col, s);
  for (; row < g.rows; ++row) tile<1, C, kA>(g, row, col, s);
}

// A strip of up to 16 columns: 16 as 2 vectors, 8 as one, the rest one element at a time.
void strip(const DeviceGemm& g, int col, int width, const GemmSpan& s) {
  with_a_kind(g, [&]<AKind kA>() {
    if (width >= 16) rows<2, kA>(g, col, s), col += 16, width -= 16;
    if (width >= 8) rows<1, kA>(g, col, s), col += 8, width -= 8;
  });
  for (int row = 0; row < g.rows; ++row)
    for (int c = col; c < col + width; ++c) scalar::gemm_element(g, row, c, s);
}

}  // namespace

void gemm(const DeviceGemm& g) { gemm_in_strips(g, 16, 0, strip); }

}  // namespace tilevit::numerics::avx2
