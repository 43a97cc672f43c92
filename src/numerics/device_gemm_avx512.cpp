// device_gemm on 16 lanes (AVX-512 F, VL and BW): register tiles of R rows x C vectors of
// 16 columns, each lane one output element with the definition's operations in its order
// (device_gemm_tiles.hpp). The last vector of a strip masks the lanes beyond C; strips
// without such a vector are compiled without masks (a mask operand in the inner loop
// costs). Functions carry their target attribute rather than the file a flag, as in
// device_kernels_avx512.cpp.
#include <immintrin.h>

#include <algorithm>
#include <cstddef>

#include "numerics/device_gemm_tiles.hpp"

#define TV_AVX512 __attribute__((target("avx512f,avx512vl,avx512bw,f16c,fma")))

namespace tilevit::numerics::avx512 {
namespace {

constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
constexpr __mmask16 kAllLanes = 0xFFFF;

template <int R, int C>
TV_AVX512 inline void round_all(__m512 (&acc)[R][C]) {
  TV_UNROLL
  for (int r = 0; r < R; ++r)
    TV_UNROLL
    for (int c = 0; c < C; ++c) acc[r][c] = _mm512_cvtph_ps(_mm512_cvtps_ph(acc[r][c], kRound));
}

// Vector c of C: the last one masked by `last` if kMasked.
template <bool kMasked, int C>
constexpr __mmask16 lanes(int c, __mmask16 last) {
  return kMasked && c + 1 == C ? last : kAllLanes;
}
template <bool kMasked>
TV_AVX512 inline __m512 load(const float* p, __mmask16 mask) {
  if constexpr (kMasked) return _mm512_maskz_loadu_ps(mask, p);
  return _mm512_loadu_ps(p);
}

template <int R, int C, bool kMasked>
TV_AVX512 inline void store(const DeviceGemm& g, int row, int col, __mmask16 last, __m512 (&acc)[R][C]) {
  TV_UNROLL
  for (int r = 0; r < R; ++r)
    TV_UNROLL
    for (int c = 0; c < C; ++c) {
      float* p = g.c + static_cast<std::size_t>(row + r) * g.ldc + col + 16 * c;
      if constexpr (kMasked)
        _mm512_mask_storeu_ps(p, lanes<kMasked, C>(c, last), acc[r][c]);
      else
        _mm512_storeu_ps(p, acc[r][c]);
    }
}

template <int R, int C, bool kMasked>
TV_AVX512 inline void store_fp16(const DeviceGemm& g, int row, int col, __mmask16 last, __m512 (&acc)[R][C]) {
  TV_UNROLL
  for (int r = 0; r < R; ++r)
    TV_UNROLL
    for (int c = 0; c < C; ++c) {
      std::uint16_t* p = g.c_fp16 + static_cast<std::size_t>(row + r) * g.ldc_fp16 + col + 16 * c;
      const __m256i h = _mm512_cvtps_ph(acc[r][c], kRound);
      if constexpr (kMasked)
        _mm256_mask_storeu_epi16(p, lanes<kMasked, C>(c, last), h);
      else
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), h);
    }
}

// C[row, row + R) x [col, col + 16 C) over the span.
template <int R, int C, bool kMasked, AKind kA>
TV_AVX512 void tile(const DeviceGemm& g, int row, int col, __mmask16 last, const GemmSpan& s) {
  __m512 acc[R][C];
  const float* out = g.c + static_cast<std::size_t>(row) * g.ldc + col;
  TV_UNROLL
  for (int r = 0; r < R; ++r)
    TV_UNROLL
    for (int c = 0; c < C; ++c)
      acc[r][c] = s.first ? _mm512_setzero_ps()
                          : load<kMasked>(out + static_cast<std::size_t>(r) * g.ldc + 16 * c, lanes<kMasked, C>(c, last));
  const std::size_t a0 = a_origin<kA>(g, row);
  const std::size_t lda = static_cast<std::size_t>(g.lda), ldb = static_cast<std::size_t>(g.ldb);
  const int step = g.panel > 0 ? g.panel : s.k1 - s.k0;
  // Binary16 output: the conversion that stores is the last panel's rounding.
  const bool bits = s.last && g.c_fp16;
  for (int k0 = s.k0; k0 < s.k1; k0 += step) {
    const int k1 = std::min(s.k1, k0 + step);
    for (int k = k0; k < k1; ++k) {
      const float* brow = g.b + static_cast<std::size_t>(k) * ldb + col;
      __m512 b[C];
      TV_UNROLL
      for (int c = 0; c < C; ++c) b[c] = load<kMasked>(brow + 16 * c, lanes<kMasked, C>(c, last));
      TV_UNROLL
      for (int r = 0; r < R; ++r) {
        const __m512 av = _mm512_set1_ps(a_value<kA>(g, a0, r, k, lda));
        TV_UNROLL
        for (int c = 0; c < C; ++c) acc[r][c] = _mm512_fmadd_ps(av, b[c], acc[r][c]);
      }
    }
    if (g.panel > 0 && !(bits && k1 == s.k1)) round_all<R, C>(acc);
  }
  if (bits) return store_fp16<R, C, kMasked>(g, row, col, last, acc);
  if (s.last && g.round_output) round_all<R, C>(acc);
  store<R, C, kMasked>(g, row, col, last, acc);
}

// All rows of one strip: blocks of RMAX rows, then the remainder as 8/4/2/1-row blocks.
template <int C, int RMAX, bool kMasked, AKind kA>
TV_AVX512 void rows(const DeviceGemm& g, int col, __mmask16 last, const GemmSpan& s) {
  int row = 0;
  for (; row + RMAX <= g.rows; row += RMAX) tile<RMAX, C, kMasked, kA>(g, row, col, last, s);
  if constexpr (RMAX > 8)
    if (g.rows - row >= 8) tile<8, C, kMasked, kA>(g, row, col, last, s), row += 8;
  if constexpr (RMAX > 4)
    if (g.rows - row >= 4) tile<4, C, kMasked, kA>(g, row, col, last, s), row += 4;
  if (g.rows - row >= 2) tile<2, C, kMasked, kA>(g, row, col, last, s), row += 2;
  if (g.rows - row >= 1) tile<1, C, kMasked, kA>(g, row, col, last, s);
}

template <int C, int RMAX>
TV_AVX512 void rows(const DeviceGemm& g, int col, __mmask16 last, const GemmSpan& s) {
  const bool full = last == kAllLanes;
  with_a_kind(g, [&]<AKind kA>() {
    full ? rows<C, RMAX, false, kA>(g, col, last, s) : rows<C, RMAX, true, kA>(g, col, last, s);
  });
}

// Up to 25 accumulators (of 32 registers): 5 vectors x 5 rows (strips of 65-80 columns,
// e.g. attention's 72: cheaper than 64 + a mostly masked 16), 4 x 6, 3 x 8, 2 x 12, 1 x 16.
// The tile follows the strip's width, so few lanes are masked off (48 columns are 3
// vectors, not 2 x 32).
TV_AVX512 void strip(const DeviceGemm& g, int col, int width, const GemmSpan& s) {
  const int vectors = (width + 15) / 16;
  const int tail = width - 16 * (vectors - 1);
  const __mmask16 last = tail >= 16 ? kAllLanes : __mmask16((1u << tail) - 1);
  switch (vectors) {
    case 5: return rows<5, 5>(g, col, last, s);
    case 4: return rows<4, 6>(g, col, last, s);
    case 3: return rows<3, 8>(g, col, last, s);
    case 2: return rows<2, 12>(g, col, last, s);
    default: return rows<1, 16>(g, col, last, s);
  }
}

}  // namespace

// Strips of 64 columns; a last strip of at most 16 joins the one before (up to 80).
void gemm(const DeviceGemm& g) { gemm_in_strips(g, 64, 16, strip); }

}  // namespace tilevit::numerics::avx512
