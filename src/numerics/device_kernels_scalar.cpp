// The device kernels' definitions (docs/NUMERICS.md) as plain loops, one element at a
// time in the defined order: the scalar path, and the reference every vector path must
// equal bit for bit. Rounding to FP16 is round_fp16 of one value (F16C, nearest even).
#include <algorithm>
#include <cmath>

#include "numerics/device_gemm_tiles.hpp"
#include "numerics/device_kernel_table.hpp"
#include "numerics/device_math.hpp"
#include "numerics/fp16.hpp"
#include "numerics/fp8.hpp"

namespace tilevit::numerics {
namespace scalar {
namespace {

// Element (row, k) of A, however it is stored.
float a_element(const DeviceGemm& g, int row, int k) {
  const std::size_t lda = static_cast<std::size_t>(g.lda);
  if (g.a_codes) return g.a_table[g.a_codes[row * lda + k]];
  if (g.a_transposed) return g.a[k * lda + row];
  return g.a[row * lda + k];
}

template <class Fp16>
void reduce_add_any(const Fp16* partials, int count_partials, std::size_t count, Fp16* out) {
  for (std::size_t i = 0; i < count; ++i) reduce_add_element(partials, count_partials, count, i, out);
}

// out[i] = fp16(a[i] + b[i]); out may be a or b (element i is read before it is written).
template <class Fp16>
void add_any(const Fp16* a, const Fp16* b, Fp16* out, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) store_fp16(out + i, value(a[i]) + value(b[i]));
}

// sum_d x[d] y[d] in FP32, d ascending, each step one FMA (exact products: FP16 or FP8
// operands); with a panel, rounded to FP16 after every `panel` steps and after the last.
float dot(const float* x, const float* y, int count, int panel) {
  float t = 0.0f;
  for (int d = 0; d < count; ++d) {
    t = std::fma(x[d], y[d], t);
    if (panel > 0 && ((d + 1) % panel == 0 || d + 1 == count)) t = round_fp16(t);
  }
  return t;
}

}  // namespace

void gemm_element(const DeviceGemm& g, int row, int col, const GemmSpan& span) {
  float& c = g.c[static_cast<std::size_t>(row) * g.ldc + col];
  float t = span.first ? 0.0f : c;
  for (int k = span.k0; k < span.k1; ++k) {
    t = std::fma(a_element(g, row, k), g.b[static_cast<std::size_t>(k) * g.ldb + col], t);
    const bool panel_end = g.panel > 0 && ((k + 1) % g.panel == 0 || k + 1 == g.inner);
    if (panel_end) t = round_fp16(t);
  }
  if (!span.last) {
    c = t;
  } else if (g.c_fp16) {
    g.c_fp16[static_cast<std::size_t>(row) * g.ldc_fp16 + col] = fp16_bits(t);
  } else {
    c = g.round_output ? round_fp16(t) : t;
  }
}

void gemm(const DeviceGemm& g) {
  const GemmSpan all{0, g.inner, true, true};
  for (int row = 0; row < g.rows; ++row)
    for (int col = 0; col < g.columns; ++col) gemm_element(g, row, col, all);
}

void reduce_add(const float* partials, int count_partials, std::size_t count, float* out) {
  reduce_add_any(partials, count_partials, count, out);
}
void reduce_add_fp16(const std::uint16_t* partials, int count_partials, std::size_t count, std::uint16_t* out) {
  reduce_add_any(partials, count_partials, count, out);
}

void add(const float* a, const float* b, float* out, std::size_t count) { add_any(a, b, out, count); }
void add_fp16(const std::uint16_t* a, const std::uint16_t* b, std::uint16_t* out, std::size_t count) {
  add_any(a, b, out, count);
}

LayerNormStatistics layernorm_statistics(const float* x, int width, float eps) {
  // The whole row as one part of the split LayerNorm (device_kernels_split_norm.cpp).
  float mean_m2[2];
  device_layernorm_moments(x, width, mean_m2);
  const float variance = mean_m2[1] / static_cast<float>(width);
  return {mean_m2[0], 1.0f / std::sqrt(variance + eps)};
}

float layernorm_element(float x, float gamma, float beta, const LayerNormStatistics& s) {
  return round_fp16(((x - s.mean) * s.rstd) * gamma + beta);
}

void layernorm_row(const float* x, const float* gamma, const float* beta, float* out, int width, float eps) {
  const LayerNormStatistics s = layernorm_statistics(x, width, eps);
  for (int i = 0; i < width; ++i) out[i] = layernorm_element(x[i], gamma[i], beta[i], s);
}

// fp16((0.5 x) (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))), each operation in FP32.
void gelu(const float* x, float* out, std::size_t count) {
  const float k = 0.7978845608028654f;  // sqrt(2/pi)
  for (std::size_t i = 0; i < count; ++i) {
    const float v = x[i];
    const float inner = k * (v + 0.044715f * (v * v * v));
    out[i] = round_fp16((0.5f * v) * (1.0f + device_tanh(inner)));
  }
}

float scale_and_max(float* s, std::size_t stride, int count, float scale) {
  float m = -INFINITY;
  for (int j = 0; j < count; ++j) {
    float& x = s[j * stride];
    x = x * scale;
    m = x > m ? x : m;
  }
  return m;
}

float exp_sum_round(const float* s, float* p, std::size_t stride, int count, float max) {
  float l = 0.0f;
  for (int j = 0; j < count; ++j) {
    const float e = device_exp(s[j * stride] - max);
    l += e;
    p[j * stride] = round_fp16(e);
  }
  return l;
}

// Key-major scores: s[j * queries + i] = (q_i . k_j) * scale; row_max[i] = max_j s.
void attention_scores(const float* q, int ldq, const float* k, int ldk, int queries, int keys, int head_dim, float scale,
                      float* scores, float* row_max, AttentionPrecision precision) {
  const auto query = [&](int i) { return q + static_cast<std::size_t>(i) * ldq; };
  for (int j = 0; j < keys; ++j)
    for (int i = 0; i < queries; ++i)
      scores[static_cast<std::size_t>(j) * queries + i] = dot(query(i), k + static_cast<std::size_t>(j) * ldk, head_dim,
                                                                  precision.panel());
  for (int i = 0; i < queries; ++i) row_max[i] = scale_and_max(scores + i, static_cast<std::size_t>(queries), keys, scale);
}

// partial[i] = {o_b[0..head_dim), l_b} with o_b[d] = sum_j p[j][i] v[j][d] (FP32, j ascending;
// FP8: p = F143(fp16(e)) and the sum rounded to FP16 after every panel of keys).
void attention_values(const float* scores, float* probabilities, const float* row_max, int queries, int keys, const float* v,
                      int ldv, int head_dim, float* partial, AttentionPrecision precision) {
  const std::size_t width = static_cast<std::size_t>(head_dim) + 1, stride = static_cast<std::size_t>(queries);
  const int panel = precision.panel();
  for (int i = 0; i < queries; ++i)
    partial[i * width + head_dim] = exp_sum_round(scores + i, probabilities + i, stride, keys, row_max[i]);
  if (precision.fp8)
    for (std::size_t e = 0; e < stride * static_cast<std::size_t>(keys); ++e)
      probabilities[e] = fp8_decode(fp8_encode(probabilities[e], Fp8Format::F143, kAttentionProbabilityScale),
                                    Fp8Format::F143, kAttentionProbabilityScale);
  for (int i = 0; i < queries; ++i)
    for (int d = 0; d < head_dim; ++d) {
      float o = 0.0f;
      for (int j = 0; j < keys; ++j) {
        o = std::fma(probabilities[j * stride + i], v[static_cast<std::size_t>(j) * ldv + d], o);
        if (panel > 0 && ((j + 1) % panel == 0 || j + 1 == keys)) o = round_fp16(o);
      }
      partial[i * width + d] = o;
    }
}

float block_sum(const float* partials, int blocks, int rows, int width, int row, int column) {
  float t = 0.0f;
  for (int b = 0; b < blocks; ++b) t = t + partials[(static_cast<std::size_t>(b) * rows + row) * width + column];
  return t;
}

void attention_combine(const float* partials, int blocks, int rows, int head_dim, float* out, int ldo) {
  const int width = head_dim + 1;
  for (int i = 0; i < rows; ++i) {
    const float l = block_sum(partials, blocks, rows, width, i, head_dim);
    for (int d = 0; d < head_dim; ++d)
      out[static_cast<std::size_t>(i) * ldo + d] = round_fp16(block_sum(partials, blocks, rows, width, i, d) / l);
  }
}

void exp_array(const float* x, float subtract, float* out, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) out[i] = device_exp(x[i] - subtract);
}

float softmax_row(float* s, int keys, float scale) {
  const float m = scale_and_max(s, 1, keys, scale);
  return exp_sum_round(s, s, 1, keys, m);
}

void normalise_row(const float* o, float l, float* out, int count) {
  for (int d = 0; d < count; ++d) out[d] = round_fp16(o[d] / l);
}

}  // namespace scalar

const KernelTable kScalarKernels{
    .gemm = scalar::gemm,
    .reduce_add = scalar::reduce_add,
    .reduce_add_fp16 = scalar::reduce_add_fp16,
    .add = scalar::add,
    .add_fp16 = scalar::add_fp16,
    .layernorm_row = scalar::layernorm_row,
    .gelu = scalar::gelu,
    .attention_scores = scalar::attention_scores,
    .attention_values = scalar::attention_values,
    .attention_combine = scalar::attention_combine,
    .exp_array = scalar::exp_array,
    .softmax_row = scalar::softmax_row,
    .normalise_row = scalar::normalise_row,
};

}  // namespace tilevit::numerics
