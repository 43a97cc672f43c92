// The device kernels on 16 lanes (AVX-512 F, VL and BW), where the wider lanes pay: exp,
// GELU, LayerNorm's normalisation and attention's passes over the scores. Each lane
// performs the definition's operations (device_kernels_scalar.cpp) in the same order with
// the same rounding, so it equals the scalar result; blends are mask moves, and tails are
// masked lanes (lanes beyond the data are neither read nor written). The kernels where
// AVX-512 gains nothing use the AVX2 forms; the GEMM is in device_gemm_avx512.cpp.
//
// Every function here carries its target attribute (not a per-file flag), so no inline
// function of a shared header is compiled for AVX-512 here and then picked by the linker
// for code that runs on CPUs without it.
#include <immintrin.h>

#include <cmath>
#include <cstddef>

#include "numerics/device_kernel_table.hpp"
#include "numerics/device_math.hpp"

#define TV_AVX512 __attribute__((target("avx512f,avx512vl,avx512bw,f16c,fma")))

namespace tilevit::numerics {
namespace avx512 {
namespace {

constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

constexpr __mmask16 kAllLanes = 0xFFFF;
// The first min(n, 16) of 16 lanes (n >= 1).
inline __mmask16 lanes_up_to(std::size_t n) { return n >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << n) - 1); }

TV_AVX512 inline __m512 round16(__m512 x) { return _mm512_cvtph_ps(_mm512_cvtps_ph(x, kRound)); }

// device_exp (device_math.hpp) on 16 lanes. Two steps use fewer instructions for the same
// exact operation: n * ln2_hi is exact (n has at most 8 bits, ln2_hi 8 significant bits),
// so x - n * ln2_hi is one fused multiply-subtract with the same single rounding; and for
// the lanes kept (n in [-126, 127]) p * 2^n is a multiplication by a normal power of two,
// which vscalefps does with the same rounding in one instruction instead of four.
TV_AVX512 inline __m512 exp16(__m512 v) {
  const __mmask16 flush = _mm512_cmp_ps_mask(v, _mm512_set1_ps(kExpFlushBelow), _CMP_LT_OQ);
  v = _mm512_min_ps(_mm512_set1_ps(kExpClampAbove), v);  // NaN stays NaN, as in the scalar `if`
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(v, _mm512_set1_ps(kExpLog2e)), kRound);
  const __m512 r = _mm512_sub_ps(_mm512_fnmadd_ps(n, _mm512_set1_ps(kExpLn2Hi), v), _mm512_mul_ps(n, _mm512_set1_ps(kExpLn2Lo)));
  __m512 p = _mm512_set1_ps(kExpPolynomial[0]);
  TV_UNROLL
  for (int i = 1; i < 8; ++i) p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(kExpPolynomial[i]));
  return _mm512_maskz_scalef_ps(static_cast<__mmask16>(~flush), p, n);
}

// device_tanh on 16 lanes.
TV_AVX512 inline __m512 tanh16(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 a = _mm512_abs_ps(x);
  const __m512 e = exp16(_mm512_mul_ps(_mm512_set1_ps(2.0f), a));
  const __m512 t = _mm512_sub_ps(one, _mm512_div_ps(_mm512_set1_ps(2.0f), _mm512_add_ps(e, one)));
  const __m512 m = _mm512_mask_mov_ps(t, _mm512_cmp_ps_mask(a, _mm512_set1_ps(9.0f), _CMP_GT_OQ), one);
  const __m512i flipped = _mm512_xor_si512(_mm512_castps_si512(m), _mm512_set1_epi32(static_cast<int>(0x80000000u)));
  return _mm512_mask_mov_ps(m, _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ), _mm512_castsi512_ps(flipped));
}

// The element-wise kernels one block of 16 lanes at a time, `m` the lanes in the data:
// called with all lanes for whole blocks (the compiler drops the masks then) and with
// the lanes left for the tail.
TV_AVX512 inline void exp_block(const float* x, __m512 subtract, float* out, __mmask16 m) {
  _mm512_mask_storeu_ps(out, m, exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x), subtract)));
}

// Before rounding to FP16.
TV_AVX512 inline void gelu_block(const float* x, float* out, __mmask16 m) {
  const __m512 v = _mm512_maskz_loadu_ps(m, x);
  const __m512 cube = _mm512_mul_ps(_mm512_mul_ps(v, v), v);
  const __m512 inner =
      _mm512_mul_ps(_mm512_set1_ps(0.7978845608028654f), _mm512_add_ps(v, _mm512_mul_ps(_mm512_set1_ps(0.044715f), cube)));
  _mm512_mask_storeu_ps(out, m, _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), v), _mm512_add_ps(_mm512_set1_ps(1.0f), tanh16(inner))));
}

// fp16(((x - mean) * rstd) * gamma + beta).
TV_AVX512 inline void normalise_block(const float* x, const float* gamma, const float* beta, float* out, __m512 mean,
                                      __m512 rstd, __mmask16 m) {
  const __m512 centred = _mm512_sub_ps(_mm512_maskz_loadu_ps(m, x), mean);
  const __m512 t = _mm512_mul_ps(_mm512_mul_ps(centred, rstd), _mm512_maskz_loadu_ps(m, gamma));
  _mm512_mask_storeu_ps(out, m, round16(_mm512_add_ps(t, _mm512_maskz_loadu_ps(m, beta))));
}

TV_AVX512 void exp_array(const float* x, float subtract, float* out, std::size_t count) {
  const __m512 s = _mm512_set1_ps(subtract);
  std::size_t i = 0;
  for (; i + 16 <= count; i += 16) exp_block(x + i, s, out + i, kAllLanes);
  if (i < count) exp_block(x + i, s, out + i, lanes_up_to(count - i));
}

TV_AVX512 void gelu(const float* x, float* out, std::size_t count) {
  std::size_t i = 0;
  for (; i + 16 <= count; i += 16) gelu_block(x + i, out + i, kAllLanes);
  if (i < count) gelu_block(x + i, out + i, lanes_up_to(count - i));
  round_fp16(out, count);  // a second pass: converting inside the divide-bound loop is slower
}

// The statistics as defined (sequential sums), the normalisation 16 elements at a time.
TV_AVX512 void layernorm_row(const float* x, const float* gamma, const float* beta, float* out, int width, float eps) {
  const scalar::LayerNormStatistics s = scalar::layernorm_statistics(x, width, eps);
  const __m512 mean = _mm512_set1_ps(s.mean), rstd = _mm512_set1_ps(s.rstd);
  int i = 0;
  for (; i + 16 <= width; i += 16) normalise_block(x + i, gamma + i, beta + i, out + i, mean, rstd, kAllLanes);
  if (i < width) normalise_block(x + i, gamma + i, beta + i, out + i, mean, rstd, lanes_up_to(static_cast<std::size_t>(width - i)));
}

// attention_scores' pass over the key-major scores, 16 queries in the lanes: s = s * scale,
// m = s > m ? s : m over keys ascending (_mm512_max_ps(x, m) is exactly that).
TV_AVX512 void scale_and_max(float* s, int queries, int keys, float scale, float* row_max) {
  const __m512 factor = _mm512_set1_ps(scale);
  for (int e = 0; e < queries; e += 16) {
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
}

// attention_values' first pass, 16 queries in the lanes: e = exp(s - m), l = l + e (keys
// ascending, from 0), p = fp16(e); l goes to partial[i][width - 1].
TV_AVX512 void exp_sum_round(const float* s, float* p, const float* row_max, int queries, int keys, float* partial, int width) {
  for (int e = 0; e < queries; e += 16) {
    const __mmask16 lanes = lanes_up_to(static_cast<std::size_t>(queries - e));
    const __m512 m = _mm512_maskz_loadu_ps(lanes, row_max + e);
    __m512 l = _mm512_setzero_ps();
    for (int j = 0; j < keys; ++j) {
      const std::size_t at = static_cast<std::size_t>(j) * queries + e;
      const __m512 x = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(lanes, s + at), m));
      l = _mm512_add_ps(l, x);
      _mm512_mask_storeu_ps(p + at, lanes, round16(x));
    }
    alignas(64) float sums[16];
    _mm512_store_ps(sums, l);
    for (int i = 0; i < 16 && e + i < queries; ++i) partial[static_cast<std::size_t>(e + i) * width + width - 1] = sums[i];
  }
}

}  // namespace
}  // namespace avx512

const KernelTable kAvx512Kernels{
    .gemm = avx512::gemm,
    .reduce_add = avx2::reduce_add,
    .reduce_add_fp16 = avx2::reduce_add_fp16,
    .add = avx2::add,
    .add_fp16 = avx2::add_fp16,
    .layernorm_row = avx512::layernorm_row,
    .gelu = avx512::gelu,
    .attention_scores = attention_scores_by_gemm<avx512::gemm, avx512::scale_and_max>,
    .attention_values = attention_values_by_gemm<avx512::gemm, avx512::exp_sum_round>,
    .attention_combine = avx2::attention_combine,
    .exp_array = avx512::exp_array,
    .softmax_row = softmax_row_by_exp_array<avx512::exp_array>,
    .normalise_row = avx2::normalise_row,
};

}  // namespace tilevit::numerics
