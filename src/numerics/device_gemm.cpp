// device_gemm (docs/NUMERICS.md): every output element is one FP32 accumulator that
// starts at 0, adds the products in increasing inner index with FMA (exact: the products
// of FP8/FP16 operands fit FP32) and is rounded to FP16 at the end of every panel. The
// three paths below (AVX-512, AVX2, scalar) do exactly that per element; they differ only
// in how many elements are computed side by side, so their results are identical.
//
// Speed (the device model runs ~1.4 M small GEMMs per call): register tiles are chosen
// per strip width so that masked-off lanes are rare (48 columns = 3 vectors, not 2 x 32),
// the panel loop is a plain inner loop (rounding between panels, not a test per step),
// and long inner extents are cut into chunks at panel boundaries with the FP32
// accumulators parked in C between chunks (exact: a float stored and reloaded is the
// same float), which keeps the B chunk in cache for the host reference's big GEMMs.
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "numerics/cpu.hpp"
#include "numerics/device_kernels.hpp"
#include "numerics/fp16.hpp"

namespace tilevit::numerics {
namespace {

GemmPath g_forced_path = GemmPath::automatic;

// The inner-extent chunk, rounded to a multiple of the panel so chunk ends are panel ends.
constexpr int kChunk = 256;
constexpr int kChunkAbove = 384;  // inner extents up to this run in one chunk

struct Span {
  int k0, k1;
  bool first, last;  // first chunk: accumulators start at 0; last: apply round_output
};

// ---------------------------------------------------------------- AVX-512
#define TV_AVX512 __attribute__((target("avx512f,avx512vl,avx512bw,f16c,fma")))
// The register tiles only stay in registers if their loops are unrolled completely.
#define TV_UNROLL _Pragma("GCC unroll 16")

template <int R, int C>
TV_AVX512 inline void round_all_512(__m512 (&acc)[R][C]) {
  TV_UNROLL
  for (int r = 0; r < R; ++r)
    TV_UNROLL
    for (int c = 0; c < C; ++c)
      acc[r][c] = _mm512_cvtph_ps(_mm512_cvtps_ph(acc[r][c], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// R rows x C vectors of 16 columns; if kMasked, the last vector's lanes beyond the matrix
// are masked (full strips go without: a mask register operand in the inner loop costs).
template <bool kMasked>
TV_AVX512 inline __m512 load_512(const float* p, __mmask16 mask) {
  if constexpr (kMasked) return _mm512_maskz_loadu_ps(mask, p);
  return _mm512_loadu_ps(p);
}

// How A is stored: floats, FP8 codes looked up in the decode table (two loads, no
// arithmetic: the FMA ports stay free), or floats transposed (A^T row-major).
enum class AKind { floats, codes, transposed };

// Element (row + r, k) of A, with a0 = row * lda (row for transposed A).
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

template <int R, int C, bool kMasked, AKind kA>
TV_AVX512 void tile_512(const DeviceGemm& g, int row, int col, __mmask16 last, const Span& s) {
  __m512 acc[R][C];
  float* out = g.c + static_cast<std::size_t>(row) * g.ldc + col;
  TV_UNROLL
  for (int r = 0; r < R; ++r)
    TV_UNROLL
    for (int c = 0; c < C; ++c)
      acc[r][c] = s.first ? _mm512_setzero_ps()
                          : load_512<kMasked>(out + static_cast<std::size_t>(r) * g.ldc + 16 * c, c + 1 == C ? last : 0xFFFF);
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
      for (int c = 0; c < C; ++c) b[c] = load_512<kMasked>(brow + 16 * c, c + 1 == C ? last : 0xFFFF);
      TV_UNROLL
      for (int r = 0; r < R; ++r) {
        const __m512 av = _mm512_set1_ps(a_value<kA>(g, a0, r, k, lda));
        TV_UNROLL
        for (int c = 0; c < C; ++c) acc[r][c] = _mm512_fmadd_ps(av, b[c], acc[r][c]);
      }
    }
    if (g.panel > 0 && !(bits && k1 == s.k1)) round_all_512<R, C>(acc);
  }
  if (bits) {
    TV_UNROLL
    for (int r = 0; r < R; ++r)
      TV_UNROLL
      for (int c = 0; c < C; ++c) {
        std::uint16_t* p = g.c_fp16 + static_cast<std::size_t>(row + r) * g.ldc_fp16 + col + 16 * c;
        const __m256i h = _mm512_cvtps_ph(acc[r][c], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        if constexpr (kMasked)
          _mm256_mask_storeu_epi16(p, c + 1 == C ? last : __mmask16(0xFFFF), h);
        else
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), h);
      }
    return;
  }
  if (s.last && g.round_output) round_all_512<R, C>(acc);
  TV_UNROLL
  for (int r = 0; r < R; ++r)
    TV_UNROLL
    for (int c = 0; c < C; ++c) {
      float* p = out + static_cast<std::size_t>(r) * g.ldc + 16 * c;
      if constexpr (kMasked)
        _mm512_mask_storeu_ps(p, c + 1 == C ? last : __mmask16(0xFFFF), acc[r][c]);
      else
        _mm512_storeu_ps(p, acc[r][c]);
    }
}

// All rows of one strip: blocks of RMAX rows, then the remainder as 8/4/2/1-row blocks.
template <int C, int RMAX, bool kMasked, AKind kA>
TV_AVX512 void strip_512(const DeviceGemm& g, int col, __mmask16 last, const Span& s) {
  int row = 0;
  for (; row + RMAX <= g.rows; row += RMAX) tile_512<RMAX, C, kMasked, kA>(g, row, col, last, s);
  if constexpr (RMAX > 8)
    if (g.rows - row >= 8) tile_512<8, C, kMasked, kA>(g, row, col, last, s), row += 8;
  if constexpr (RMAX > 4)
    if (g.rows - row >= 4) tile_512<4, C, kMasked, kA>(g, row, col, last, s), row += 4;
  if (g.rows - row >= 2) tile_512<2, C, kMasked, kA>(g, row, col, last, s), row += 2;
  if (g.rows - row >= 1) tile_512<1, C, kMasked, kA>(g, row, col, last, s);
}

template <int C, int RMAX>
TV_AVX512 void strip_512(const DeviceGemm& g, int col, __mmask16 last, const Span& s) {
  const bool full = last == __mmask16(0xFFFF);
  if (g.a_codes)
    full ? strip_512<C, RMAX, false, AKind::codes>(g, col, last, s) : strip_512<C, RMAX, true, AKind::codes>(g, col, last, s);
  else if (g.a_transposed)
    full ? strip_512<C, RMAX, false, AKind::transposed>(g, col, last, s)
         : strip_512<C, RMAX, true, AKind::transposed>(g, col, last, s);
  else
    full ? strip_512<C, RMAX, false, AKind::floats>(g, col, last, s) : strip_512<C, RMAX, true, AKind::floats>(g, col, last, s);
}

// Up to 25 accumulators (of 32 registers): 5 vectors x 5 rows (strips of 65-80 columns,
// e.g. attention's 72: cheaper than 64 + a mostly masked 16), 4 x 6, 3 x 8, 2 x 12, 1 x 16.
TV_AVX512 void strip_any_512(const DeviceGemm& g, int col, int width, const Span& s) {
  const int vectors = (width + 15) / 16;
  const int tail = width - 16 * (vectors - 1);
  const __mmask16 last = tail >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << tail) - 1);
  switch (vectors) {
    case 5: return strip_512<5, 5>(g, col, last, s);
    case 4: return strip_512<4, 6>(g, col, last, s);
    case 3: return strip_512<3, 8>(g, col, last, s);
    case 2: return strip_512<2, 12>(g, col, last, s);
    default: return strip_512<1, 16>(g, col, last, s);
  }
}

// ---------------------------------------------------------------- AVX2 (x86-64-v3)
template <int R, int C>
inline void round_all_256(__m256 (&acc)[R][C]) {
  TV_UNROLL
  for (int r = 0; r < R; ++r)
    TV_UNROLL
    for (int c = 0; c < C; ++c)
      acc[r][c] = _mm256_cvtph_ps(_mm256_cvtps_ph(acc[r][c], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// R rows x C vectors of 8 full columns (AVX2 has no cheap masks: tails go scalar).
template <int R, int C, AKind kA>
void tile_256(const DeviceGemm& g, int row, int col, const Span& s) {
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
    if (g.panel > 0 && !(bits && k1 == s.k1)) round_all_256<R, C>(acc);
  }
  if (bits) {
    TV_UNROLL
    for (int r = 0; r < R; ++r)
      TV_UNROLL
      for (int c = 0; c < C; ++c)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(g.c_fp16 + static_cast<std::size_t>(row + r) * g.ldc_fp16 + col + 8 * c),
                         _mm256_cvtps_ph(acc[r][c], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    return;
  }
  if (s.last && g.round_output) round_all_256<R, C>(acc);
  TV_UNROLL
  for (int r = 0; r < R; ++r)
    TV_UNROLL
    for (int c = 0; c < C; ++c) _mm256_storeu_ps(out + static_cast<std::size_t>(r) * g.ldc + 8 * c, acc[r][c]);
}

// Element (row, k) of A whatever its storage (the scalar path's run-time choice).
float a_element(const DeviceGemm& g, int row, int k) {
  if (g.a_codes) return a_value<AKind::codes>(g, a_origin<AKind::codes>(g, row), 0, k, g.lda);
  if (g.a_transposed) return a_value<AKind::transposed>(g, a_origin<AKind::transposed>(g, row), 0, k, g.lda);
  return a_value<AKind::floats>(g, a_origin<AKind::floats>(g, row), 0, k, g.lda);
}

// One output element: the same sequence of operations as one lane of the vector tiles.
void scalar_element(const DeviceGemm& g, int row, int col, const Span& s) {
  float& out = g.c[static_cast<std::size_t>(row) * g.ldc + col];
  float t = s.first ? 0.0f : out;
  const int step = g.panel > 0 ? g.panel : s.k1 - s.k0;
  for (int k0 = s.k0; k0 < s.k1; k0 += step) {
    const int k1 = std::min(s.k1, k0 + step);
    for (int k = k0; k < k1; ++k) {
      t = std::fma(a_element(g, row, k), g.b[static_cast<std::size_t>(k) * g.ldb + col], t);
    }
    if (g.panel > 0) t = round_fp16(t);
  }
  if (s.last && g.c_fp16) {
    g.c_fp16[static_cast<std::size_t>(row) * g.ldc_fp16 + col] = fp16_bits(t);
    return;
  }
  if (s.last && g.round_output) t = round_fp16(t);
  out = t;
}

// 16 columns (2 vectors) x 6 rows = 12 accumulators of 16 registers; then 8 columns.
template <AKind kA>
void strip_256(const DeviceGemm& g, int& col, int& width, const Span& s) {
  if (width >= 16) {
    int row = 0;
    for (; row + 6 <= g.rows; row += 6) tile_256<6, 2, kA>(g, row, col, s);
    for (; row < g.rows; ++row) tile_256<1, 2, kA>(g, row, col, s);
    col += 16, width -= 16;
  }
  if (width >= 8) {
    int row = 0;
    for (; row + 6 <= g.rows; row += 6) tile_256<6, 1, kA>(g, row, col, s);
    for (; row < g.rows; ++row) tile_256<1, 1, kA>(g, row, col, s);
    col += 8, width -= 8;
  }
}

void strip_any_256(const DeviceGemm& g, int col, int width, const Span& s) {
  if (g.a_codes)
    strip_256<AKind::codes>(g, col, width, s);
  else if (g.a_transposed)
    strip_256<AKind::transposed>(g, col, width, s);
  else
    strip_256<AKind::floats>(g, col, width, s);
  for (int row = 0; row < g.rows; ++row)
    for (int c = col; c < col + width; ++c) scalar_element(g, row, c, s);
}

void strip_scalar(const DeviceGemm& g, int col, int width, const Span& s) {
  for (int row = 0; row < g.rows; ++row)
    for (int c = col; c < col + width; ++c) scalar_element(g, row, c, s);
}

}  // namespace

void force_gemm_path(GemmPath path) { g_forced_path = path; }
GemmPath gemm_path() {
  if (g_forced_path == GemmPath::automatic || (g_forced_path == GemmPath::avx512 && !has_avx512()))
    return has_avx512() ? GemmPath::avx512 : GemmPath::avx2;
  return g_forced_path;
}

void device_gemm(const DeviceGemm& g) {
  if (g.rows <= 0 || g.columns <= 0) return;
  const GemmPath path = gemm_path();
  // Strips of whole register tiles: 64 columns (AVX-512) or 16 (AVX2, scalar); with
  // AVX-512 a last strip of at most 16 columns joins the one before (up to 80 columns).
  const int strip = path == GemmPath::avx512 ? 64 : 16;
  int strips = (g.columns + strip - 1) / strip;
  if (path == GemmPath::avx512 && strips > 1 && g.columns - strip * (strips - 1) <= 16) --strips;
  const int chunk = g.inner <= kChunkAbove ? std::max(g.inner, 1)
                    : g.panel > 0 ? g.panel * std::max(1, kChunk / g.panel) : kChunk;
  auto run_strip = [&](int i) {
    const int col = i * strip, width = i + 1 == strips ? g.columns - col : strip;
    for (int k0 = 0; k0 < std::max(g.inner, 1); k0 += chunk) {
      const Span s{k0, std::min(g.inner, k0 + chunk), k0 == 0, k0 + chunk >= g.inner};
      if (path == GemmPath::avx512)
        strip_any_512(g, col, width, s);
      else if (path == GemmPath::avx2)
        strip_any_256(g, col, width, s);
      else
        strip_scalar(g, col, width, s);
    }
  };
  // Small GEMMs (the device model's, ~10 per kernel call) skip the OpenMP construct
  // altogether: even an inactive parallel region sets up a team, which cost microseconds.
  if (strips > 1 && !omp_in_parallel() && static_cast<long>(g.rows) * g.columns * g.inner > (1L << 16)) {
#pragma omp parallel for schedule(static)
    for (int i = 0; i < strips; ++i) run_strip(i);
  } else {
    for (int i = 0; i < strips; ++i) run_strip(i);
  }
}

}  // namespace tilevit::numerics
