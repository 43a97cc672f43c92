#pragma once
// Vectorised exp and tanh-GELU for the FP32 reference (AVX2, 8 lanes). libm's scalar
// expf/tanhf would take about a quarter of the FP32 forward pass; these keep ~1e-7
// relative error, well inside what an FP32 yardstick needs. (The device numerics use
// device_math.hpp.)
#include <immintrin.h>

#include <cstddef>

namespace tilevit::reference {

inline __m256 exp8(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.0f)), _mm256_set1_ps(88.0f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693145751953125f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(1.428606765330187e-06f), r);
  __m256 p = _mm256_set1_ps(1.98412698e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.38888889e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.33333333e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.16666667e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.66666667e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
}

// x <- 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), tanh(u) = 1 - 2 / (exp(2u) + 1).
inline void gelu_tanh_fp32(float* x, std::size_t count) {
  std::size_t i = 0;
  const __m256 one = _mm256_set1_ps(1.0f), two = _mm256_set1_ps(2.0f), half = _mm256_set1_ps(0.5f);
  for (; i + 8 <= count; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256 v3 = _mm256_mul_ps(_mm256_mul_ps(v, v), v);
    const __m256 u = _mm256_mul_ps(_mm256_set1_ps(0.7978845608028654f),
                                   _mm256_fmadd_ps(_mm256_set1_ps(0.044715f), v3, v));
    const __m256 t = _mm256_sub_ps(one, _mm256_div_ps(two, _mm256_add_ps(exp8(_mm256_mul_ps(two, u)), one)));
    _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_mul_ps(half, v), _mm256_add_ps(one, t)));
  }
  for (; i < count; ++i) {
    float lane[8] = {x[i]};
    gelu_tanh_fp32(lane, 8);
    x[i] = lane[0];
  }
}

// Softmax of one row after multiplying by `scale`.
inline void softmax_fp32(float* row, int keys, float scale) {
  const __m256 s = _mm256_set1_ps(scale);
  __m256 m8 = _mm256_set1_ps(-3.0e38f);
  int j = 0;
  for (; j + 8 <= keys; j += 8) m8 = _mm256_max_ps(m8, _mm256_mul_ps(_mm256_loadu_ps(row + j), s));
  float lanes[8];
  _mm256_storeu_ps(lanes, m8);
  float m = lanes[0];
  for (float v : lanes) m = v > m ? v : m;
  for (int k = j; k < keys; ++k) m = row[k] * scale > m ? row[k] * scale : m;
  const __m256 mv = _mm256_set1_ps(m);
  __m256 sum8 = _mm256_setzero_ps();
  for (j = 0; j + 8 <= keys; j += 8) {
    const __m256 e = exp8(_mm256_fmsub_ps(_mm256_loadu_ps(row + j), s, mv));
    _mm256_storeu_ps(row + j, e);
    sum8 = _mm256_add_ps(sum8, e);
  }
  _mm256_storeu_ps(lanes, sum8);
  float sum = 0;
  for (float v : lanes) sum += v;
  for (int k = j; k < keys; ++k) {
    float lane[8] = {row[k] * scale - m};
    _mm256_storeu_ps(lane, exp8(_mm256_loadu_ps(lane)));
    row[k] = lane[0];
    sum += lane[0];
  }
  const __m256 inv = _mm256_set1_ps(1.0f / sum);
  for (j = 0; j + 8 <= keys; j += 8) _mm256_storeu_ps(row + j, _mm256_mul_ps(_mm256_loadu_ps(row + j), inv));
  for (int k = j; k < keys; ++k) row[k] *= 1.0f / sum;
}

}  // namespace tilevit::reference
