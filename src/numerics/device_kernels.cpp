#include "numerics/device_kernels.hpp"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "numerics/device_math.hpp"
#include "numerics/fp16.hpp"

namespace tilevit::numerics {
namespace {

constexpr int kStrip = 16;  // columns per micro-tile: two AVX2 registers
constexpr int kRows = 4;    // rows per micro-tile

inline __m256 round_fp16_vec(__m256 v) {
  return _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// R rows x 16 columns, the whole inner extent. FMA is exact here: a*b is exact in FP32
// for FP16/FP8 operands, so fma(a, b, t) == t + a*b rounded once.
template <int R>
void micro_tile(const DeviceGemm& g, int row, int col) {
  __m256 acc[R][2];
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  int since_round = 0;
  for (int k = 0; k < g.inner; ++k) {
    const float* brow = g.b + static_cast<std::size_t>(k) * g.ldb + col;
    const __m256 b0 = _mm256_loadu_ps(brow);
    const __m256 b1 = _mm256_loadu_ps(brow + 8);
    for (int r = 0; r < R; ++r) {
      const __m256 a = _mm256_broadcast_ss(g.a + static_cast<std::size_t>(row + r) * g.lda + k);
      acc[r][0] = _mm256_fmadd_ps(a, b0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(a, b1, acc[r][1]);
    }
    if (g.panel > 0 && (++since_round == g.panel || k + 1 == g.inner)) {
      since_round = 0;
      for (int r = 0; r < R; ++r) {
        acc[r][0] = round_fp16_vec(acc[r][0]);
        acc[r][1] = round_fp16_vec(acc[r][1]);
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    if (g.round_output) {
      acc[r][0] = round_fp16_vec(acc[r][0]);
      acc[r][1] = round_fp16_vec(acc[r][1]);
    }
    float* out = g.c + static_cast<std::size_t>(row + r) * g.ldc + col;
    _mm256_storeu_ps(out, acc[r][0]);
    _mm256_storeu_ps(out + 8, acc[r][1]);
  }
}

// One output element, the same sequence of operations as micro_tile's lanes.
void scalar_element(const DeviceGemm& g, int row, int col) {
  float t = 0.0f;
  int since_round = 0;
  for (int k = 0; k < g.inner; ++k) {
    t = std::fma(g.a[static_cast<std::size_t>(row) * g.lda + k], g.b[static_cast<std::size_t>(k) * g.ldb + col], t);
    if (g.panel > 0 && (++since_round == g.panel || k + 1 == g.inner)) {
      since_round = 0;
      t = round_fp16(t);
    }
  }
  if (g.round_output) t = round_fp16(t);
  g.c[static_cast<std::size_t>(row) * g.ldc + col] = t;
}

void column_strip(const DeviceGemm& g, int col, int width) {
  if (width == kStrip) {
    int row = 0;
    for (; row + kRows <= g.rows; row += kRows) micro_tile<kRows>(g, row, col);
    for (; row < g.rows; ++row) micro_tile<1>(g, row, col);
  } else {
    for (int row = 0; row < g.rows; ++row)
      for (int c = col; c < col + width; ++c) scalar_element(g, row, c);
  }
}


// The same computation on AVX-512 (8 rows x 32 columns), compiled for that ISA only and
// chosen at run time; per element it is the identical sequence of FMAs and roundings.
constexpr int kStrip512 = 32;
constexpr int kRows512 = 8;

template <int R>
__attribute__((target("avx512f,avx512vl,f16c,fma"))) inline void round_fp16_512(__m512 (&acc)[R][2]) {
  for (int r = 0; r < R; ++r)
    for (int h = 0; h < 2; ++h)
      acc[r][h] = _mm512_cvtph_ps(_mm512_cvtps_ph(acc[r][h], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

template <int R>
__attribute__((target("avx512f,avx512vl,f16c,fma"))) void micro_tile_512(const DeviceGemm& g, int row, int col,
                                                                          int width) {
  // Columns beyond `width` (the last strip of a matrix) are masked off: the lanes that
  // are computed do exactly what the scalar definition does.
  const __mmask16 m0 = width >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << width) - 1);
  const __mmask16 m1 = width >= 32 ? __mmask16(0xFFFF) : width > 16 ? __mmask16((1u << (width - 16)) - 1) : __mmask16(0);
  __m512 acc[R][2];
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  int since_round = 0;
  for (int k = 0; k < g.inner; ++k) {
    const float* brow = g.b + static_cast<std::size_t>(k) * g.ldb + col;
    const __m512 b0 = _mm512_maskz_loadu_ps(m0, brow);
    const __m512 b1 = _mm512_maskz_loadu_ps(m1, brow + 16);
    for (int r = 0; r < R; ++r) {
      const __m512 a = _mm512_set1_ps(g.a[static_cast<std::size_t>(row + r) * g.lda + k]);
      acc[r][0] = _mm512_fmadd_ps(a, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(a, b1, acc[r][1]);
    }
    if (g.panel > 0 && (++since_round == g.panel || k + 1 == g.inner)) {
      since_round = 0;
      round_fp16_512<R>(acc);
    }
  }
  if (g.round_output) round_fp16_512<R>(acc);
  for (int r = 0; r < R; ++r) {
    float* out = g.c + static_cast<std::size_t>(row + r) * g.ldc + col;
    _mm512_mask_storeu_ps(out, m0, acc[r][0]);
    _mm512_mask_storeu_ps(out + 16, m1, acc[r][1]);
  }
}

__attribute__((target("avx512f,avx512vl,f16c,fma"))) void column_strip_512(const DeviceGemm& g, int col, int width) {
  int row = 0;
  for (; row + kRows512 <= g.rows; row += kRows512) micro_tile_512<kRows512>(g, row, col, width);
  for (; row + 2 <= g.rows; row += 2) micro_tile_512<2>(g, row, col, width);
  for (; row < g.rows; ++row) micro_tile_512<1>(g, row, col, width);
}

bool has_avx512() {
  static const bool yes = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
  return yes;
}

}  // namespace

void device_gemm(const DeviceGemm& g) {
  const bool parallel = !omp_in_parallel() && static_cast<long>(g.rows) * g.columns * g.inner > (1L << 16);
  if (has_avx512()) {
    const int strips = (g.columns + kStrip512 - 1) / kStrip512;
#pragma omp parallel for schedule(static) if (parallel)
    for (int s = 0; s < strips; ++s)
      column_strip_512(g, s * kStrip512, std::min(kStrip512, g.columns - s * kStrip512));
    return;
  }
  const int strips = (g.columns + kStrip - 1) / kStrip;
#pragma omp parallel for schedule(static) if (parallel)
  for (int s = 0; s < strips; ++s) {
    const int col = s * kStrip;
    column_strip(g, col, g.columns - col < kStrip ? g.columns - col : kStrip);
  }
}

void device_reduce_add(const float* partials, int count_partials, std::size_t count, float* out) {
  for (std::size_t i = 0; i < count; ++i) {
    float t = 0.0f;
    for (int p = 0; p < count_partials; ++p) t = t + partials[static_cast<std::size_t>(p) * count + i];
    out[i] = t;
  }
  round_fp16(out, count);
}

void device_add(const float* a, const float* b, float* out, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) out[i] = a[i] + b[i];
  round_fp16(out, count);
}

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
  for (int i = 0; i < width; ++i) out[i] = ((x[i] - mean) * rstd) * gamma[i] + beta[i];
  round_fp16(out, static_cast<std::size_t>(width));
}

void device_gelu(const float* x, float* out, std::size_t count) {
  const float k = 0.7978845608028654f;  // sqrt(2/pi)
  for (std::size_t i = 0; i < count; ++i) {
    const float v = x[i];
    const float inner = k * (v + 0.044715f * (v * v * v));
    out[i] = (0.5f * v) * (1.0f + device_tanh(inner));
  }
  round_fp16(out, count);
}

void device_attention_scores(const float* q, int ldq, const float* k, int ldk, int queries, int keys, int head_dim,
                             float scale, float* scores, float* row_max) {
  std::vector<float> kt(static_cast<std::size_t>(head_dim) * keys);
  for (int j = 0; j < keys; ++j)
    for (int e = 0; e < head_dim; ++e) kt[static_cast<std::size_t>(e) * keys + j] = k[static_cast<std::size_t>(j) * ldk + e];
  device_gemm(DeviceGemm{queries, keys, head_dim, q, ldq, kt.data(), keys, scores, keys, 0, false});
  for (int i = 0; i < queries; ++i) {
    float* row = scores + static_cast<std::size_t>(i) * keys;
    float m = -INFINITY;
    for (int j = 0; j < keys; ++j) {
      row[j] = row[j] * scale;
      m = row[j] > m ? row[j] : m;
    }
    row_max[i] = m;
  }
}

void device_attention_values(float* scores, const float* row_max, int queries, int keys, const float* v, int ldv,
                             int head_dim, float* partial) {
  const int width = head_dim + 1;
  for (int i = 0; i < queries; ++i) {
    float* row = scores + static_cast<std::size_t>(i) * keys;
    float l = 0.0f;
    for (int j = 0; j < keys; ++j) {
      const float e = device_exp(row[j] - row_max[i]);
      l += e;
      row[j] = e;
    }
    round_fp16(row, static_cast<std::size_t>(keys));
    partial[static_cast<std::size_t>(i) * width + head_dim] = l;
  }
  device_gemm(DeviceGemm{queries, head_dim, keys, scores, keys, v, ldv, partial, width, 0, false});
}

void device_attention_combine(const float* partials, int blocks, int rows, int head_dim, float* out, int ldo) {
  const int width = head_dim + 1;
  std::vector<float> o(static_cast<std::size_t>(head_dim));
  for (int i = 0; i < rows; ++i) {
    std::fill(o.begin(), o.end(), 0.0f);
    float l = 0.0f;
    for (int b = 0; b < blocks; ++b) {
      const float* part = partials + (static_cast<std::size_t>(b) * rows + i) * width;
      for (int d = 0; d < head_dim; ++d) o[d] = o[d] + part[d];
      l = l + part[head_dim];
    }
    device_normalise_row(o.data(), l, out + static_cast<std::size_t>(i) * ldo, head_dim);
  }
}

float device_softmax_row(float* s, int keys, float scale) {
  float m = -INFINITY;
  for (int j = 0; j < keys; ++j) {
    s[j] = s[j] * scale;
    m = s[j] > m ? s[j] : m;
  }
  float l = 0.0f;
  for (int j = 0; j < keys; ++j) {
    const float e = device_exp(s[j] - m);
    l += e;
    s[j] = e;
  }
  round_fp16(s, static_cast<std::size_t>(keys));
  return l;
}

void device_normalise_row(const float* o, float l, float* out, int count) {
  for (int d = 0; d < count; ++d) out[d] = o[d] / l;
  round_fp16(out, static_cast<std::size_t>(count));
}

}  // namespace tilevit::numerics
