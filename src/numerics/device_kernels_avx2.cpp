// The device kernels on 8 lanes (AVX2, FMA and F16C: the x86-64-v3 baseline the project
// is built for). Each lane performs the definition's operations (device_kernels_scalar.cpp)
// in the same order with the same IEEE rounding, and FMA only where the definition has
// it, so every lane equals the scalar result; what the vector loops leave over goes
// through the scalar steps. The GEMM is in device_gemm_avx2.cpp.
#include <immintrin.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "numerics/device_kernel_table.hpp"
#include "numerics/device_math.hpp"
#include "numerics/fp16.hpp"

namespace tilevit::numerics {
namespace avx2 {
namespace {

constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

// round_fp16 on 8 lanes.
inline __m256 round8(__m256 x) { return _mm256_cvtph_ps(_mm256_cvtps_ph(x, kRound)); }

// device_exp and device_tanh (device_math.hpp) on 8 lanes.
inline __m256 exp8(__m256 x) {
  const __m256 flush = _mm256_cmp_ps(x, _mm256_set1_ps(kExpFlushBelow), _CMP_LT_OQ);
  x = _mm256_min_ps(_mm256_set1_ps(kExpClampAbove), x);  // NaN stays NaN, as in the scalar `if`
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(kExpLog2e)), kRound);
  // n * ln2_hi is exact (n has at most 8 bits, ln2_hi 8 significant bits), so
  // x - n * ln2_hi as one fused multiply-subtract has the scalar's single rounding.
  const __m256 r =
      _mm256_sub_ps(_mm256_fnmadd_ps(n, _mm256_set1_ps(kExpLn2Hi), x), _mm256_mul_ps(n, _mm256_set1_ps(kExpLn2Lo)));
  __m256 p = _mm256_set1_ps(kExpPolynomial[0]);
  TV_UNROLL
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

// 8 FP16 values from floats or from binary16 bits; 8 FP32 values rounded to FP16 and
// stored in either form.
inline __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
inline __m256 load8(const std::uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
inline void store8_fp16(float* p, __m256 t) { _mm256_storeu_ps(p, round8(t)); }
inline void store8_fp16(std::uint16_t* p, __m256 t) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(t, kRound));
}

// reduce_add 32 elements at a time (four independent sums in registers), then 8.
template <class Fp16>
void reduce_add_any(const Fp16* partials, int count_partials, std::size_t count, Fp16* out) {
  const auto part = [&](int p, std::size_t i) { return load8(partials + p * count + i); };
  std::size_t i = 0;
  for (; i + 32 <= count; i += 32) {
    __m256 t0 = _mm256_setzero_ps(), t1 = t0, t2 = t0, t3 = t0;
    for (int p = 0; p < count_partials; ++p) {
      t0 = _mm256_add_ps(t0, part(p, i)), t1 = _mm256_add_ps(t1, part(p, i + 8));
      t2 = _mm256_add_ps(t2, part(p, i + 16)), t3 = _mm256_add_ps(t3, part(p, i + 24));
    }
    store8_fp16(out + i, t0), store8_fp16(out + i + 8, t1), store8_fp16(out + i + 16, t2), store8_fp16(out + i + 24, t3);
  }
  for (; i + 8 <= count; i += 8) {
    __m256 t = _mm256_setzero_ps();
    for (int p = 0; p < count_partials; ++p) t = _mm256_add_ps(t, part(p, i));
    store8_fp16(out + i, t);
  }
  for (; i < count; ++i) scalar::reduce_add_element(partials, count_partials, count, i, out);
}

template <class Fp16>
std::size_t add_any(const Fp16* a, const Fp16* b, Fp16* out, std::size_t count) {
  std::size_t i = 0;
  for (; i + 8 <= count; i += 8) store8_fp16(out + i, _mm256_add_ps(load8(a + i), load8(b + i)));
  return i;
}

// The 8 x 8 block r[0..8) (row i = r[i]) transposed in registers: out row c = column c.
inline void transpose8x8(__m256 (&r)[8], __m256 (&out)[8]) {
  __m256 t[8];
  TV_UNROLL
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  TV_UNROLL
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  TV_UNROLL
  for (int i = 0; i < 4; ++i) {
    out[i] = _mm256_permute2f128_ps(r[i], r[i + 4], 0x20);
    out[i + 4] = _mm256_permute2f128_ps(r[i], r[i + 4], 0x31);
  }
}

// attention_scores' pass over the key-major scores, 8 queries in the lanes: s = s * scale
// and m = s > m ? s : m over keys ascending (_mm256_max_ps(x, m) is exactly that).
// Whole groups of 8 queries (AVX2 has no cheap masks), the rest one query at a time.
void scale_and_max(float* s, int queries, int keys, float scale, float* row_max) {
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
  for (int e = groups; e < queries; ++e) row_max[e] = scalar::scale_and_max(s + e, static_cast<std::size_t>(queries), keys, scale);
}

// attention_values' first pass, 8 queries in the lanes: e = exp(s - m), l = l + e (keys
// ascending, from 0), p = fp16(e); l goes to partial[i][width - 1].
void exp_sum_round(const float* s, float* p, const float* row_max, int queries, int keys, float* partial, int width) {
  const int groups = queries & ~7;
  for (int e = 0; e < groups; e += 8) {
    const __m256 m = _mm256_loadu_ps(row_max + e);
    __m256 l = _mm256_setzero_ps();
    for (int j = 0; j < keys; ++j) {
      const std::size_t at = static_cast<std::size_t>(j) * queries + e;
      const __m256 x = exp8(_mm256_sub_ps(_mm256_loadu_ps(s + at), m));
      l = _mm256_add_ps(l, x);
      _mm256_storeu_ps(p + at, round8(x));
    }
    alignas(32) float sums[8];
    _mm256_store_ps(sums, l);
    for (int i = 0; i < 8; ++i) partial[static_cast<std::size_t>(e + i) * width + width - 1] = sums[i];
  }
  for (int e = groups; e < queries; ++e)
    partial[static_cast<std::size_t>(e) * width + width - 1] =
        scalar::exp_sum_round(s + e, p + e, static_cast<std::size_t>(queries), keys, row_max[e]);
}

void exp_array(const float* x, float subtract, float* out, std::size_t count) {
  const __m256 s = _mm256_set1_ps(subtract);
  std::size_t i = 0;
  for (; i + 8 <= count; i += 8) _mm256_storeu_ps(out + i, exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), s)));
  kScalarKernels.exp_array(x + i, subtract, out + i, count - i);
}

void gelu(const float* x, float* out, std::size_t count) {
  const __m256 k = _mm256_set1_ps(0.7978845608028654f), c = _mm256_set1_ps(0.044715f);
  const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f);
  std::size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256 cube = _mm256_mul_ps(_mm256_mul_ps(v, v), v);
    const __m256 inner = _mm256_mul_ps(k, _mm256_add_ps(v, _mm256_mul_ps(c, cube)));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_mul_ps(half, v), _mm256_add_ps(one, tanh8(inner))));
  }
  round_fp16(out, i);  // a second pass: converting inside the divide-bound loop is slower
  kScalarKernels.gelu(x + i, out + i, count - i);
}

// The statistics as defined (sequential sums), the normalisation side by side: GCC's
// vectoriser leaves that loop scalar (it would need run-time alias checks).
void layernorm_row(const float* x, const float* gamma, const float* beta, float* out, int width, float eps) {
  const scalar::LayerNormStatistics s = scalar::layernorm_statistics(x, width, eps);
  const __m256 mean = _mm256_set1_ps(s.mean), rstd = _mm256_set1_ps(s.rstd);
  int i = 0;
  for (; i + 8 <= width; i += 8) {
    const __m256 t = _mm256_mul_ps(_mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), mean), rstd), _mm256_loadu_ps(gamma + i));
    _mm256_storeu_ps(out + i, round8(_mm256_add_ps(t, _mm256_loadu_ps(beta + i))));
  }
  for (; i < width; ++i) out[i] = scalar::layernorm_element(x[i], gamma[i], beta[i], s);
}

}  // namespace

void transpose(const float* in, int ldi, int rows, int cols, float* out, int ldo) {
  const auto at = [](auto* p, int ld, int r, int c) { return p + static_cast<std::size_t>(r) * ld + c; };
  const int rows8 = rows & ~7, cols8 = cols & ~7;
  for (int j = 0; j < rows8; j += 8)
    for (int e = 0; e < cols8; e += 8) {
      __m256 r[8], t[8];
      TV_UNROLL
      for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(at(in, ldi, j + i, e));
      transpose8x8(r, t);
      TV_UNROLL
      for (int i = 0; i < 8; ++i) _mm256_storeu_ps(at(out, ldo, e + i, j), t[i]);
    }
  for (int j = 0; j < rows; ++j)
    for (int e = j < rows8 ? cols8 : 0; e < cols; ++e) *at(out, ldo, e, j) = *at(in, ldi, j, e);
}

void reduce_add(const float* partials, int count_partials, std::size_t count, float* out) {
  reduce_add_any(partials, count_partials, count, out);
}
void reduce_add_fp16(const std::uint16_t* partials, int count_partials, std::size_t count, std::uint16_t* out) {
  reduce_add_any(partials, count_partials, count, out);
}

void add(const float* a, const float* b, float* out, std::size_t count) {
  const std::size_t i = add_any(a, b, out, count);
  kScalarKernels.add(a + i, b + i, out + i, count - i);
}
void add_fp16(const std::uint16_t* a, const std::uint16_t* b, std::uint16_t* out, std::size_t count) {
  const std::size_t i = add_any(a, b, out, count);
  kScalarKernels.add_fp16(a + i, b + i, out + i, count - i);
}

void normalise_row(const float* o, float l, float* out, int count) {
  const __m256 l8 = _mm256_set1_ps(l);
  int d = 0;
  for (; d + 8 <= count; d += 8) _mm256_storeu_ps(out + d, round8(_mm256_div_ps(_mm256_loadu_ps(o + d), l8)));
  kScalarKernels.normalise_row(o + d, l, out + d, count - d);
}

// Per element the definition's adds in block order (o = 0, o = o + o_b, ...), 8 head dims
// side by side; then fp16(o / l).
void attention_combine(const float* partials, int blocks, int rows, int head_dim, float* out, int ldo) {
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
    for (; d < head_dim; ++d) o[d] = scalar::block_sum(partials, blocks, rows, width, i, d);
    const float l = scalar::block_sum(partials, blocks, rows, width, i, head_dim);
    normalise_row(o.data(), l, out + static_cast<std::size_t>(i) * ldo, head_dim);
  }
}

}  // namespace avx2

const KernelTable kAvx2Kernels{
    .gemm = avx2::gemm,
    .reduce_add = avx2::reduce_add,
    .reduce_add_fp16 = avx2::reduce_add_fp16,
    .add = avx2::add,
    .add_fp16 = avx2::add_fp16,
    .layernorm_row = avx2::layernorm_row,
    .gelu = avx2::gelu,
    .attention_scores = attention_scores_by_gemm<avx2::gemm, avx2::scale_and_max>,
    .attention_values = attention_values_by_gemm<avx2::gemm, avx2::exp_sum_round>,
    .attention_combine = avx2::attention_combine,
    .exp_array = avx2::exp_array,
    .softmax_row = softmax_row_by_exp_array<avx2::exp_array>,
    .normalise_row = avx2::normalise_row,
};

}  // namespace tilevit::numerics
