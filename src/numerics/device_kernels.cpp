#include "numerics/device_kernels.hpp"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "numerics/cpu.hpp"
#include "numerics/device_math.hpp"
#include "numerics/fp16.hpp"

namespace tilevit::numerics {
namespace {

// Small fixed loops unrolled completely: at -O2 GCC keeps them as loops, which leaves
// register arrays on the stack (the transposes took twice as long) and the exp
// polynomial as a loop of broadcasts.
#define TV_UNROLL8 _Pragma("GCC unroll 8")

// device_exp and device_tanh (device_math.hpp) on 8 lanes: the same IEEE operations in
// the same order (no FMA, round-to-nearest), so every lane equals the scalar result.
inline __m256 exp8(__m256 x) {
  const __m256 flush = _mm256_cmp_ps(x, _mm256_set1_ps(kExpFlushBelow), _CMP_LT_OQ);
  x = _mm256_min_ps(_mm256_set1_ps(kExpClampAbove), x);  // NaN stays NaN, as in the scalar `if`
  const __m256 n =
      _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(kExpLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  // n * ln2_hi is exact (see exp16): one fused multiply-subtract, the same rounding.
  const __m256 r = _mm256_sub_ps(_mm256_fnmadd_ps(n, _mm256_set1_ps(kExpLn2Hi), x), _mm256_mul_ps(n, _mm256_set1_ps(kExpLn2Lo)));
  __m256 p = _mm256_set1_ps(kExpPolynomial[0]);
  TV_UNROLL8
  for (int i = 1; i < 8; ++i) p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(kExpPolynomial[i]));
  const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvttps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_andnot_ps(flush, _mm256_mul_ps(p, _mm256_castsi256_ps(bits)));
}

inline __m256 tanh8(__m256 x) {
  const __m256 sign = _mm256_set1_ps(-0.0f), one = _mm256_set1_ps(1.0f);
  const __m256 a = _mm256_andnot_ps(sign, x);
  const __m256 e = exp8(_mm256_mul_ps(_mm256_set1_ps(2.0f), a));
  const __m256 t = _mm256_sub_ps(one, _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(e, one)));
  const __m256 big = _mm256_cmp_ps(a, _mm256_set1_ps(9.0f), _CMP_GT_OQ);
  const __m256 negative = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ);
  const __m256 m = _mm256_blendv_ps(t, one, big);
  return _mm256_blendv_ps(m, _mm256_xor_ps(m, sign), negative);
}

// The 8 x 8 block r[0..8) (row i = r[i]) transposed in registers: out row c = column c
// (a plain copy of values, so exact).
inline void transpose8x8(__m256 (&r)[8], __m256 (&out)[8]) {
  __m256 t[8];
  TV_UNROLL8
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  TV_UNROLL8
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  TV_UNROLL8
  for (int i = 0; i < 4; ++i) {
    out[i] = _mm256_permute2f128_ps(r[i], r[i + 4], 0x20);
    out[i + 4] = _mm256_permute2f128_ps(r[i], r[i + 4], 0x31);
  }
}

// out[e][j] = in[j][e] for j < rows, e < cols: 8 x 8 blocks in registers, the edges
// element by element.
void transpose(const float* in, int ldi, int rows, int cols, float* out, int ldo) {
  const auto at = [](auto* p, int ld, int r, int c) { return p + static_cast<std::size_t>(r) * ld + c; };
  const int rows8 = rows & ~7, cols8 = cols & ~7;
  for (int j = 0; j < rows8; j += 8)
    for (int e = 0; e < cols8; e += 8) {
      __m256 r[8], t[8];
      TV_UNROLL8
      for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(at(in, ldi, j + i, e));
      transpose8x8(r, t);
      TV_UNROLL8
      for (int i = 0; i < 8; ++i) _mm256_storeu_ps(at(out, ldo, e + i, j), t[i]);
    }
  for (int j = 0; j < rows; ++j)
    for (int e = j < rows8 ? cols8 : 0; e < cols; ++e) *at(out, ldo, e, j) = *at(in, ldi, j, e);
}

// The AVX2 forms of scale_max_512 and exp_sum_round_512 below: whole groups of 8 queries
// (AVX2 has no cheap masks); the callers finish the rest element by element.
std::size_t scale_max_256(float* s, int queries, int keys, float scale, float* row_max) {
  const __m256 factor = _mm256_set1_ps(scale);
  const int groups = queries & ~7;
  for (int e = 0; e < groups; e += 8) {
    __m256 m = _mm256_set1_ps(-INFINITY);
    for (int j = 0; j < keys; ++j) {
      float* p = s + static_cast<std::size_t>(j) * queries + e;
      const __m256 x = _mm256_mul_ps(_mm256_loadu_ps(p), factor);
      _mm256_storeu_ps(p, x);
      m = _mm256_max_ps(x, m);
    }
    _mm256_storeu_ps(row_max + e, m);
  }
  return static_cast<std::size_t>(groups);
}

std::size_t exp_sum_round_256(const float* s, float* p, const float* row_max, int queries, int keys, float* partial,
                              int width) {
  constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  const int groups = queries & ~7;
  for (int e = 0; e < groups; e += 8) {
    const __m256 m = _mm256_loadu_ps(row_max + e);
    __m256 l = _mm256_setzero_ps();
    for (int j = 0; j < keys; ++j) {
      const std::size_t at = static_cast<std::size_t>(j) * queries + e;
      const __m256 x = exp8(_mm256_sub_ps(_mm256_loadu_ps(s + at), m));
      l = _mm256_add_ps(l, x);
      _mm256_storeu_ps(p + at, _mm256_cvtph_ps(_mm256_cvtps_ph(x, kRound)));
    }
    alignas(32) float sums[8];
    _mm256_store_ps(sums, l);
    for (int i = 0; i < 8; ++i) partial[static_cast<std::size_t>(e + i) * width + width - 1] = sums[i];
  }
  return static_cast<std::size_t>(groups);
}

// exp8 and tanh8 on 16 lanes (AVX-512): the same results, so every lane equals the scalar
// result (blends are mask moves). Two steps use fewer instructions for the same exact
// operation: n * ln2_hi is exact (n has at most 8 bits, ln2_hi 8 significant bits), so
// x - n * ln2_hi is one fused multiply-subtract with the same single rounding; and for the
// lanes kept (n in [-126, 127]) p * 2^n is a multiplication by a normal power of two, which
// vscalefps does with the same rounding in one instruction instead of four.
#define TV_AVX512F __attribute__((target("avx512f")))

// The first min(n, 16) of 16 lanes (n >= 1).
inline __mmask16 lanes_up_to(std::size_t n) { return n >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << n) - 1); }

TV_AVX512F inline __m512 exp16(__m512 v) {
  const __mmask16 flush = _mm512_cmp_ps_mask(v, _mm512_set1_ps(kExpFlushBelow), _CMP_LT_OQ);
  v = _mm512_min_ps(_mm512_set1_ps(kExpClampAbove), v);
  const __m512 n =
      _mm512_roundscale_ps(_mm512_mul_ps(v, _mm512_set1_ps(kExpLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 r = _mm512_sub_ps(_mm512_fnmadd_ps(n, _mm512_set1_ps(kExpLn2Hi), v), _mm512_mul_ps(n, _mm512_set1_ps(kExpLn2Lo)));
  __m512 p = _mm512_set1_ps(kExpPolynomial[0]);
  TV_UNROLL8
  for (int i = 1; i < 8; ++i) p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(kExpPolynomial[i]));
  return _mm512_maskz_scalef_ps(static_cast<__mmask16>(~flush), p, n);
}

TV_AVX512F inline __m512 tanh16(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 a = _mm512_abs_ps(x);
  const __m512 e = exp16(_mm512_mul_ps(_mm512_set1_ps(2.0f), a));
  const __m512 t = _mm512_sub_ps(one, _mm512_div_ps(_mm512_set1_ps(2.0f), _mm512_add_ps(e, one)));
  const __m512 m = _mm512_mask_mov_ps(t, _mm512_cmp_ps_mask(a, _mm512_set1_ps(9.0f), _CMP_GT_OQ), one);
  const __m512i flipped = _mm512_xor_si512(_mm512_castps_si512(m), _mm512_set1_epi32(static_cast<int>(0x80000000u)));
  return _mm512_mask_mov_ps(m, _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ), _mm512_castsi512_ps(flipped));
}

TV_AVX512F std::size_t exp_array_512(const float* x, float subtract, float* out, std::size_t count) {
  const __m512 s = _mm512_set1_ps(subtract);
  std::size_t i = 0;
  for (; i + 16 <= count; i += 16) _mm512_storeu_ps(out + i, exp16(_mm512_sub_ps(_mm512_loadu_ps(x + i), s)));
  // The tail as masked lanes (each lane the same operations; lanes beyond are neither read
  // nor written): as scalar calls it cost a tenth of attention_values.
  if (i < count) {
    const __mmask16 m = lanes_up_to(count - i);
    _mm512_mask_storeu_ps(out + i, m, exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), s)));
    i = count;
  }
  return i;
}

// The scores' pass in place, 16 queries at a time: s = s * scale, m = s > m ? s : m over
// keys ascending (_mm512_max_ps(x, m) is exactly x > m ? x : m). Returns the queries done.
TV_AVX512F std::size_t scale_max_512(float* s, int queries, int keys, float scale, float* row_max) {
  const __m512 factor = _mm512_set1_ps(scale);
  int e = 0;
  for (; e < queries; e += 16) {
    const __mmask16 lanes = lanes_up_to(static_cast<std::size_t>(queries - e));
    __m512 m = _mm512_set1_ps(-INFINITY);
    for (int j = 0; j < keys; ++j) {
      float* p = s + static_cast<std::size_t>(j) * queries + e;
      const __m512 x = _mm512_mul_ps(_mm512_maskz_loadu_ps(lanes, p), factor);
      _mm512_mask_storeu_ps(p, lanes, x);
      m = _mm512_max_ps(x, m);
    }
    _mm512_mask_storeu_ps(row_max + e, lanes, m);
  }
  return static_cast<std::size_t>(queries);
}

// attention_values' first pass, 16 queries at a time over key-major scores: e = exp(s - m),
// l = l + e (keys ascending, from 0), p = fp16(e). l goes to partial[i][width - 1].
TV_AVX512F std::size_t exp_sum_round_512(const float* s, float* p, const float* row_max, int queries, int keys,
                                         float* partial, int width) {
  constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  for (int e = 0; e < queries; e += 16) {
    const __mmask16 lanes = lanes_up_to(static_cast<std::size_t>(queries - e));
    const __m512 m = _mm512_maskz_loadu_ps(lanes, row_max + e);
    __m512 l = _mm512_setzero_ps();
    for (int j = 0; j < keys; ++j) {
      const std::size_t at = static_cast<std::size_t>(j) * queries + e;
      const __m512 x = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(lanes, s + at), m));
      l = _mm512_add_ps(l, x);
      _mm512_mask_storeu_ps(p + at, lanes, _mm512_cvtph_ps(_mm512_cvtps_ph(x, kRound)));
    }
    alignas(64) float sums[16];
    _mm512_store_ps(sums, l);
    for (int i = 0; i < 16 && e + i < queries; ++i) partial[static_cast<std::size_t>(e + i) * width + width - 1] = sums[i];
  }
  return static_cast<std::size_t>(queries);
}

// device_gelu's vector loop on 16 lanes.
TV_AVX512F std::size_t gelu_512(const float* x, float* out, std::size_t count, float k) {
  std::size_t i = 0;
  for (; i + 16 <= count; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    const __m512 cube = _mm512_mul_ps(_mm512_mul_ps(v, v), v);
    const __m512 inner = _mm512_mul_ps(_mm512_set1_ps(k), _mm512_add_ps(v, _mm512_mul_ps(_mm512_set1_ps(0.044715f), cube)));
    _mm512_storeu_ps(out + i, _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), v), _mm512_add_ps(_mm512_set1_ps(1.0f), tanh16(inner))));
  }
  return i;
}

}  // namespace

float* line_aligned(std::vector<float>& storage, std::size_t n) {
  constexpr std::size_t kLine = 64 / sizeof(float);
  if (storage.size() < n + kLine) storage.resize(n + kLine);
  const std::size_t misfit = reinterpret_cast<std::uintptr_t>(storage.data()) % 64 / sizeof(float);
  return storage.data() + (misfit == 0 ? 0 : kLine - misfit);
}

void device_exp_array(const float* x, float subtract, float* out, std::size_t count) {
  const GemmPath path = gemm_path();
  std::size_t i = path == GemmPath::avx512 ? exp_array_512(x, subtract, out, count) : 0;
  const __m256 s = _mm256_set1_ps(subtract);
  for (; path != GemmPath::scalar && i + 8 <= count; i += 8) _mm256_storeu_ps(out + i, exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), s)));
  for (; i < count; ++i) out[i] = device_exp(x[i] - subtract);
}

void device_reduce_add(const float* partials, int count_partials, std::size_t count, float* out) {
  // Per element t = 0, t = t + p_0, t = t + p_1, ...: partial-major so it vectorises.
  for (std::size_t i = 0; i < count; ++i) out[i] = 0.0f;
  for (int p = 0; p < count_partials; ++p) {
    const float* part = partials + static_cast<std::size_t>(p) * count;
    for (std::size_t i = 0; i < count; ++i) out[i] = out[i] + part[i];
  }
  round_fp16(out, count);
}

void device_reduce_add_fp16(const std::uint16_t* partials, int count_partials, std::size_t count, std::uint16_t* out) {
  constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  auto part = [&](int p, std::size_t i) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(partials + p * count + i)));
  };
  std::size_t i = 0;
  // Per element the same operations as device_reduce_add: t = 0, t = t + p_0, ..., one
  // FP16 rounding (which is also the bits stored).
  for (; i + 32 <= count; i += 32) {
    __m256 t0 = _mm256_setzero_ps(), t1 = t0, t2 = t0, t3 = t0;
    for (int p = 0; p < count_partials; ++p) {
      t0 = _mm256_add_ps(t0, part(p, i)), t1 = _mm256_add_ps(t1, part(p, i + 8));
      t2 = _mm256_add_ps(t2, part(p, i + 16)), t3 = _mm256_add_ps(t3, part(p, i + 24));
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm256_cvtps_ph(t0, kRound));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i + 8), _mm256_cvtps_ph(t1, kRound));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i + 16), _mm256_cvtps_ph(t2, kRound));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i + 24), _mm256_cvtps_ph(t3, kRound));
  }
  for (; i + 8 <= count; i += 8) {
    __m256 t = _mm256_setzero_ps();
    for (int p = 0; p < count_partials; ++p) t = _mm256_add_ps(t, part(p, i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm256_cvtps_ph(t, kRound));
  }
  for (; i < count; ++i) {
    float t = 0.0f;
    for (int p = 0; p < count_partials; ++p) t = t + fp16_value(partials[p * count + i]);
    out[i] = fp16_bits(t);
  }
}

void device_add(const float* a, const float* b, float* out, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) out[i] = a[i] + b[i];
  round_fp16(out, count);
}

void device_add_fp16(const std::uint16_t* a, const std::uint16_t* b, std::uint16_t* out, std::size_t count) {
  constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  auto load = [](const std::uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); };
  std::size_t i = 0;
  for (; i + 8 <= count; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm256_cvtps_ph(_mm256_add_ps(load(a + i), load(b + i)), kRound));
  for (; i < count; ++i) out[i] = fp16_bits(fp16_value(a[i]) + fp16_value(b[i]));
}

namespace {

// ((x - mean) * rstd) * gamma + beta on 16 lanes (the same operations per element).
TV_AVX512F int normalise_512(const float* x, const float* gamma, const float* beta, float* out, int width, float mean,
                             float rstd) {
  const __m512 m = _mm512_set1_ps(mean), s = _mm512_set1_ps(rstd);
  int i = 0;
  for (; i + 16 <= width; i += 16) {
    const __m512 t = _mm512_mul_ps(_mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(x + i), m), s), _mm512_loadu_ps(gamma + i));
    _mm512_storeu_ps(out + i, _mm512_add_ps(t, _mm512_loadu_ps(beta + i)));
  }
  return i;
}

}  // namespace

void device_layernorm_row(const float* x, const float* gamma, const float* beta, float* out, int width, float eps) {
  float sum = 0.0f;
  for (int i = 0; i < width; ++i) sum += x[i];
  const float mean = sum / static_cast<float>(width);
  float squares = 0.0f;
  for (int i = 0; i < width; ++i) {
    const float d = x[i] - mean;
    squares += d * d;
  }
  const float variance = squares / static_cast<float>(width);
  const float rstd = 1.0f / std::sqrt(variance + eps);
  // The normalisation as explicit vectors: GCC's -O2 vectoriser leaves this loop scalar
  // (it would need run-time alias checks), which was a third of the kernel.
  const GemmPath path = gemm_path();
  int i = path == GemmPath::avx512 ? normalise_512(x, gamma, beta, out, width, mean, rstd) : 0;
  const __m256 m8 = _mm256_set1_ps(mean), s8 = _mm256_set1_ps(rstd);
  for (; path != GemmPath::scalar && i + 8 <= width; i += 8) {
    const __m256 t = _mm256_mul_ps(_mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), m8), s8), _mm256_loadu_ps(gamma + i));
    _mm256_storeu_ps(out + i, _mm256_add_ps(t, _mm256_loadu_ps(beta + i)));
  }
  for (; i < width; ++i) out[i] = ((x[i] - mean) * rstd) * gamma[i] + beta[i];
  round_fp16(out, static_cast<std::size_t>(width));
}

void device_gelu(const float* x, float* out, std::size_t count) {
  const float k = 0.7978845608028654f;  // sqrt(2/pi)
  const GemmPath path = gemm_path();
  std::size_t i = path == GemmPath::avx512 ? gelu_512(x, out, count, k) : 0;
  for (; path != GemmPath::scalar && i + 8 <= count; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256 cube = _mm256_mul_ps(_mm256_mul_ps(v, v), v);
    const __m256 inner =
        _mm256_mul_ps(_mm256_set1_ps(k), _mm256_add_ps(v, _mm256_mul_ps(_mm256_set1_ps(0.044715f), cube)));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), v),
                                            _mm256_add_ps(_mm256_set1_ps(1.0f), tanh8(inner))));
  }
  for (; i < count; ++i) {
    const float v = x[i];
    const float inner = k * (v + 0.044715f * (v * v * v));
    out[i] = (0.5f * v) * (1.0f + device_tanh(inner));
  }
  round_fp16(out, count);
}

void device_attention_scores(const float* q, int ldq, const float* k, int ldk, int queries, int keys, int head_dim,
                             float scale, float* scores, float* row_max) {
  // s^T = K Q^T (s^T[j][i] = sum_d k[j][d] q[i][d]: the same products in the same order,
  // as FMA's product commutes exactly) straight into `scores`, key-major: Q (queries x
  // head_dim) is the small operand to transpose, and lane i of a key's row is query i, so
  // the scale and each query's maximum over its keys in order are plain vector operations
  // in one pass (the values kernel reads them in the same layout).
  // Per-thread and reused: the device model calls this ~40 K times per inference. Q^T is
  // the GEMM's B: it starts on a cache line.
  thread_local std::vector<float> qt_storage;
  float* qt = line_aligned(qt_storage, static_cast<std::size_t>(head_dim) * queries);
  transpose(q, ldq, queries, head_dim, qt, queries);
  device_gemm(DeviceGemm{keys, queries, head_dim, k, ldk, qt, queries, scores, queries, 0, false});
  const GemmPath path = gemm_path();
  std::size_t e = path == GemmPath::avx512 ? scale_max_512(scores, queries, keys, scale, row_max)
                  : path == GemmPath::avx2 ? scale_max_256(scores, queries, keys, scale, row_max)
                                           : 0;
  for (; e < static_cast<std::size_t>(queries); ++e) {
    float m = -INFINITY;
    for (int j = 0; j < keys; ++j) {
      float& x = scores[static_cast<std::size_t>(j) * queries + e];
      x = x * scale;
      m = x > m ? x : m;
    }
    row_max[e] = m;
  }
}

void device_attention_values(const float* scores, float* probabilities, const float* row_max, int queries, int keys,
                             const float* v, int ldv, int head_dim, float* partial) {
  const int width = head_dim + 1;
  // e, l and p in one pass over the key-major scores: lane i is query i, so l_i (its keys
  // ascending) is a vector add per key.
  const GemmPath path = gemm_path();
  std::size_t e = path == GemmPath::avx512 ? exp_sum_round_512(scores, probabilities, row_max, queries, keys, partial, width)
                  : path == GemmPath::avx2 ? exp_sum_round_256(scores, probabilities, row_max, queries, keys, partial, width)
                                           : 0;
  for (; e < static_cast<std::size_t>(queries); ++e) {
    float l = 0.0f;
    for (int j = 0; j < keys; ++j) {
      const std::size_t at = static_cast<std::size_t>(j) * queries + e;
      const float x = device_exp(scores[at] - row_max[e]);
      l += x;
      probabilities[at] = round_fp16(x);
    }
    partial[e * width + head_dim] = l;
  }
  // o_b = P V with P read transposed from its key-major layout.
  DeviceGemm g{queries, head_dim, keys, probabilities, queries, v, ldv, partial, width, 0, false};
  g.a_transposed = true;
  device_gemm(g);
}

void device_attention_combine(const float* partials, int blocks, int rows, int head_dim, float* out, int ldo) {
  // Per element the same adds in block order as written out (o = 0, o = o + o_b, ...),
  // 8 elements side by side; then o / l rounded to FP16.
  const int width = head_dim + 1;
  thread_local std::vector<float> o;
  o.resize(static_cast<std::size_t>(head_dim));
  for (int i = 0; i < rows; ++i) {
    int d = 0;
    for (; d + 8 <= head_dim; d += 8) {
      __m256 t = _mm256_setzero_ps();
      for (int b = 0; b < blocks; ++b)
        t = _mm256_add_ps(t, _mm256_loadu_ps(partials + (static_cast<std::size_t>(b) * rows + i) * width + d));
      _mm256_storeu_ps(o.data() + d, t);
    }
    for (; d < head_dim; ++d) {
      float t = 0.0f;
      for (int b = 0; b < blocks; ++b) t = t + partials[(static_cast<std::size_t>(b) * rows + i) * width + d];
      o[d] = t;
    }
    float l = 0.0f;
    for (int b = 0; b < blocks; ++b) l = l + partials[(static_cast<std::size_t>(b) * rows + i) * width + head_dim];
    device_normalise_row(o.data(), l, out + static_cast<std::size_t>(i) * ldo, head_dim);
  }
}

float device_softmax_row(float* s, int keys, float scale) {
  float m = -INFINITY;
  for (int j = 0; j < keys; ++j) {
    s[j] = s[j] * scale;
    m = s[j] > m ? s[j] : m;
  }
  device_exp_array(s, m, s, static_cast<std::size_t>(keys));
  float l = 0.0f;
  for (int j = 0; j < keys; ++j) l += s[j];
  round_fp16(s, static_cast<std::size_t>(keys));
  return l;
}

void device_normalise_row(const float* o, float l, float* out, int count) {
  int d = 0;
  for (const __m256 l8 = _mm256_set1_ps(l); d + 8 <= count; d += 8) _mm256_storeu_ps(out + d, _mm256_div_ps(_mm256_loadu_ps(o + d), l8));
  for (; d < count; ++d) out[d] = o[d] / l;
  round_fp16(out, static_cast<std::size_t>(count));
}

}  // namespace tilevit::numerics
