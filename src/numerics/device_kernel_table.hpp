#pragma once
// The device kernels of one instruction set, one table per path: device_kernels.cpp calls
// the table of kernel_path(). The scalar table holds the definitions
// (device_kernels_scalar.cpp); the AVX2 and AVX-512 tables compute the same operations
// per element, several elements side by side, so they give the same bits.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "numerics/device_kernels.hpp"
#include "numerics/fp16.hpp"

// Small fixed loops unrolled completely: GCC keeps them as loops otherwise, which leaves
// register arrays (GEMM tiles, transposes) on the stack and the exp polynomial as a loop
// of broadcasts.
#define TV_UNROLL _Pragma("GCC unroll 16")

namespace tilevit::numerics {

// Every entry has the signature of the public kernel of the same name.
struct KernelTable {
  decltype(&device_gemm) gemm;
  decltype(&device_reduce_add) reduce_add;
  decltype(&device_reduce_add_fp16) reduce_add_fp16;
  decltype(&device_add) add;
  decltype(&device_add_fp16) add_fp16;
  decltype(&device_layernorm_row) layernorm_row;
  decltype(&device_gelu) gelu;
  decltype(&device_attention_scores) attention_scores;
  decltype(&device_attention_values) attention_values;
  decltype(&device_attention_combine) attention_combine;
  decltype(&device_exp_array) exp_array;
  decltype(&device_softmax_row) softmax_row;
  decltype(&device_normalise_row) normalise_row;
};

extern const KernelTable kScalarKernels;  // device_kernels_scalar.cpp
extern const KernelTable kAvx2Kernels;    // device_kernels_avx2.cpp
extern const KernelTable kAvx512Kernels;  // device_kernels_avx512.cpp

// Steps of the definitions that the vector forms share: statistics computed once per row,
// and the elements their vector loops leave over (whole leftover ranges go through the
// kScalarKernels entry itself).
namespace scalar {

// FP16 data held as floats (exact binary16 values) or as binary16 bits: the same values.
inline float value(float x) { return x; }
inline float value(std::uint16_t bits) { return fp16_value(bits); }
// FP32 t rounded to FP16, stored in either form.
inline void store_fp16(float* out, float t) { *out = round_fp16(t); }
inline void store_fp16(std::uint16_t* out, float t) { *out = fp16_bits(t); }

// Element i of reduce_add: fp16(t) with t = 0, t = t + partial_0[i], t = t + partial_1[i], ...
template <class Fp16>
inline void reduce_add_element(const Fp16* partials, int count_partials, std::size_t count, std::size_t i, Fp16* out) {
  float t = 0.0f;
  for (int p = 0; p < count_partials; ++p) t = t + value(partials[p * count + i]);
  store_fp16(out + i, t);
}

struct LayerNormStatistics {
  float mean, rstd;
};
LayerNormStatistics layernorm_statistics(const float* x, int width, float eps);
// fp16(((x - mean) * rstd) * gamma + beta).
float layernorm_element(float x, float gamma, float beta, const LayerNormStatistics& s);
// The `count` values s[j * stride] multiplied by `scale` in place, j ascending; returns
// their maximum (m = s > m ? s : m from -inf: NaNs never win).
float scale_and_max(float* s, std::size_t stride, int count, float scale);
// e_j = exp(s[j * stride] - max), p[j * stride] = fp16(e_j); returns l = sum e_j (FP32,
// j ascending). p may be s.
float exp_sum_round(const float* s, float* p, std::size_t stride, int count, float max);
// sum_b partials[b][row][column] (FP32, block order, from 0) of attention's partials
// [blocks][rows][width].
float block_sum(const float* partials, int blocks, int rows, int width, int row, int column);

}  // namespace scalar

// AVX2 forms that other files call: the AVX-512 table uses the first six as they are
// (they have no AVX-512 form), the attention kernels below the transpose.
namespace avx2 {

void reduce_add(const float* partials, int count_partials, std::size_t count, float* out);
void reduce_add_fp16(const std::uint16_t* partials, int count_partials, std::size_t count, std::uint16_t* out);
void add(const float* a, const float* b, float* out, std::size_t count);
void add_fp16(const std::uint16_t* a, const std::uint16_t* b, std::uint16_t* out, std::size_t count);
void attention_combine(const float* partials, int blocks, int rows, int head_dim, float* out, int ldo);
void normalise_row(const float* o, float l, float* out, int count);
// out[e][j] = in[j][e] for j < rows, e < cols: a copy, so exact.
void transpose(const float* in, int ldi, int rows, int cols, float* out, int ldo);
void gemm(const DeviceGemm& g);  // device_gemm_avx2.cpp

}  // namespace avx2

namespace avx512 {
void gemm(const DeviceGemm& g);  // device_gemm_avx512.cpp
}

// The vector paths' attention kernels and softmax row, built from the path's GEMM and
// passes (docs/NUMERICS.md, "Attention key blocks").

// s^T = K Q^T (s^T[j][i] = sum_d k[j][d] q[i][d]: the definition's products in the same
// order, as FMA's product commutes exactly) straight into the key-major scores, then the
// scale-and-max pass over them with queries in the lanes. Q (queries x head_dim), the
// small operand, is the one transposed; as the GEMM's B it starts on a cache line.
template <auto kGemm, auto kScaleAndMax>
void attention_scores_by_gemm(const float* q, int ldq, const float* k, int ldk, int queries, int keys, int head_dim,
                              float scale, float* scores, float* row_max, AttentionPrecision precision) {
  thread_local std::vector<float> qt_storage;  // reused: the device model calls this ~40 K times per inference
  float* qt = line_aligned(qt_storage, static_cast<std::size_t>(head_dim) * queries);
  avx2::transpose(q, ldq, queries, head_dim, qt, queries);
  kGemm(DeviceGemm{keys, queries, head_dim, k, ldk, qt, queries, scores, queries, precision.panel(), false});
  kScaleAndMax(scores, queries, keys, scale, row_max);
}

// The exp-sum-round pass over the key-major scores (queries in the lanes), for FP8 the
// cast of p to F143, then o_b = P V with P read transposed from its key-major layout.
template <auto kGemm, auto kExpSumRound>
void attention_values_by_gemm(const float* scores, float* probabilities, const float* row_max, int queries, int keys,
                              const float* v, int ldv, int head_dim, float* partial, AttentionPrecision precision) {
  const int width = head_dim + 1;
  kExpSumRound(scores, probabilities, row_max, queries, keys, partial, width);
  if (precision.fp8)
    device_round_f143(probabilities, static_cast<std::size_t>(queries) * keys, kAttentionProbabilityScale);
  DeviceGemm g{queries, head_dim, keys, probabilities, queries, v, ldv, partial, width, precision.panel(), false};
  g.a_transposed = true;
  kGemm(g);
}

// The scaling and maximum as defined, the exponentials side by side, the sum in order.
template <auto kExpArray>
float softmax_row_by_exp_array(float* s, int keys, float scale) {
  const float m = scalar::scale_and_max(s, 1, keys, scale);
  kExpArray(s, m, s, static_cast<std::size_t>(keys));
  float l = 0.0f;
  for (int j = 0; j < keys; ++j) l += s[j];
  round_fp16(s, static_cast<std::size_t>(keys));
  return l;
}

}  // namespace tilevit::numerics
