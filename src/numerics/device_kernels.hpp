#pragma once
// The device's arithmetic, defined once (docs/NUMERICS.md). The device-numerics host
// reference and the device model both call these, so they agree bit for bit. Device
// FP16 tensors are held as floats exactly representable in binary16; FP8 tensors as
// their decoded (exact) values.
//
// Every output element is computed by one sequential loop in a fixed order, so results
// do not depend on vectorisation, blocking or the number of threads. The scalar forms in
// device_kernels_scalar.cpp are the definitions; the AVX2 and AVX-512 forms give their
// bits, and kernel_path() (kernel_path.hpp) chooses among them.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "numerics/kernel_path.hpp"

namespace tilevit::numerics {

struct DeviceGemm {
  int rows = 0, columns = 0, inner = 0;  // C[rows][columns] = A[rows][inner] B[inner][columns]
  const float* a = nullptr;
  int lda = 0;
  const float* b = nullptr;
  int ldb = 0;
  float* c = nullptr;
  int ldc = 0;
  // The accumulator starts at 0 and sums products in inner order in FP32 (the products
  // of FP8 or FP16 operands are exact in FP32). If `panel` > 0 it is rounded to FP16
  // after every `panel` inner steps and after the last: the FP8 matrix unit's FP16
  // accumulator, one K32 coefficient panel at a time. If `round_output`, the final value
  // is rounded to FP16 (no-op when panels already rounded it).
  int panel = 0;
  bool round_output = false;
  // If set, A is FP8 codes instead of `a`: element (r, k) is a_table[a_codes[r * lda + k]]
  // (the decode table with the operand's scale). The same values, so the same results;
  // the device model reads A this way straight from tile memory instead of decoding it.
  const std::uint8_t* a_codes = nullptr;
  const float* a_table = nullptr;
  // If set, the result is written as binary16 bits (fp16 of the value: rounded to FP16 as
  // if `round_output`) to c_fp16[r * ldc_fp16 + c] instead of floats to `c`, straight from
  // the registers. `c` must still be set: it parks the FP32 accumulators between chunks
  // of a long inner extent (the device model's GEMMs are one chunk and never touch it).
  std::uint16_t* c_fp16 = nullptr;
  int ldc_fp16 = 0;
  // If set (floats only), `a` holds A transposed: element (r, k) is a[k * lda + r]. The
  // same values in the same order, so the same results; attention's P.V reads its
  // key-major probabilities this way.
  bool a_transposed = false;
};

// The vector paths run big GEMMs in parallel over column strips (OpenMP) unless called
// inside a parallel region.
void device_gemm(const DeviceGemm& g);
// A buffer of at least n floats in `storage` that starts on a 64 B cache line: the
// GEMMs load B a whole vector at a time, and with malloc's 16 B alignment every such load
// would straddle two lines.
float* line_aligned(std::vector<float>& storage, std::size_t n);

// out[i] = fp16(sum_p partials[p][i]) summed in FP32, p ascending: the reduction of a
// GEMM whose inner dimension was split over tiles.
void device_reduce_add(const float* partials, int count_partials, std::size_t count, float* out);
// The same on FP16 bits in and out (the device model's form: tile memory holds binary16):
// out_bits = fp16 bits of device_reduce_add(decoded partials). The vector forms decode
// and sum in registers, so no decoded copy of the partials is made.
void device_reduce_add_fp16(const std::uint16_t* partials, int count_partials, std::size_t count, std::uint16_t* out);

// out[i] = fp16(a[i] + b[i]): bias add, residual add, position embedding.
void device_add(const float* a, const float* b, float* out, std::size_t count);
// device_add on binary16 bits: out[i] = fp16(a[i] + b[i]), the same single rounding. out
// may be a or b exactly (element i is read before it is written), not a shifted overlap.
void device_add_fp16(const std::uint16_t* a, const std::uint16_t* b, std::uint16_t* out, std::size_t count);

// LayerNorm of one row, FP32 statistics: mean = sum(x)/n, var = sum((x-mean)^2)/n,
// rstd = 1/sqrt(var+eps); out = fp16(((x-mean)*rstd)*gamma + beta).
void device_layernorm_row(const float* x, const float* gamma, const float* beta, float* out, int width, float eps);

// LayerNorm split over column parts of part_width columns (the last may be shorter), each
// part on its own tile (docs/NUMERICS.md). Scalar definitions only: every kernel path runs
// these loops. One part of a row: mean = sum(x)/n (FP32, ascending), M2 = sum((x-mean)^2)
// (FP32, ascending), written as mean_m2[0], mean_m2[1].
void device_layernorm_moments(const float* x, int count, float* mean_m2);
struct LayerNormParts {
  float mean, rstd;
};
// The parts' {mean, M2} (part p at mean_m2 + p * part_stride) combined in column order
// from part 0 by Chan's update (n_b the part's columns, total = n + n_b, delta = mean_b -
// mean; mean += delta * (n_b / total); M2 = (M2 + M2_b) + delta^2 * ((n * n_b) / total)),
// then rstd = 1/sqrt(M2/width + eps). One part: device_layernorm_row's statistics exactly.
LayerNormParts combine_layernorm_moments(const float* mean_m2, int parts, std::size_t part_stride, int width,
                                         int part_width, float eps);
// out[i] = fp16(((x[i] - mean) * rstd) * gamma[i] + beta[i]) over one part of a row.
void device_layernorm_apply(const float* x, const float* gamma, const float* beta, float* out, int count,
                            const LayerNormParts& s);
// A whole row through the three steps above: the device-numerics reference's form.
void device_layernorm_split_row(const float* x, const float* gamma, const float* beta, float* out, int width,
                                int part_width, float eps);

// out = fp16(0.5*x*(1 + tanh(sqrt(2/pi)*(x + 0.044715*x^3)))) computed in FP32.
void device_gelu(const float* x, float* out, std::size_t count);

// The activations and the LayerScale of the other ViT families (docs/NUMERICS.md), each
// element in FP32 then rounded once to FP16. Scalar definitions only (device_kernels_family.cpp):
// no vector form yet, so every kernel path computes them with these loops.
// out = fp16((0.5*x) * (1 + erf(x * (1/sqrt 2)))), device_erf: DINOv2's and ViT's exact GELU.
void device_gelu_erf(const float* x, float* out, std::size_t count);
// out = fp16(x / (1 + exp(-1.702*x))), device_exp: CLIP's quick_gelu, x*sigmoid(1.702x).
void device_quick_gelu(const float* x, float* out, std::size_t count);
// out[i] = fp16(a[i] * b[i]): LayerScale, a row times the per-channel scale. out may be a
// or b exactly.
void device_multiply(const float* a, const float* b, float* out, std::size_t count);

// The precision of attention's two products (docs/NUMERICS.md, "FP8 attention products").
// FP16 (the default): FP16 q, k, v and p, each sum in FP32. FP8: q, k and v are F143
// values (cast in the QKV epilogue), both products run on the FP8 matrix unit, whose FP16
// accumulator is rounded after every K32 panel (QK^T: over the head dims; P.V: over the
// keys), and p = F143(fp16(e)) at the fixed scale kAttentionProbabilityScale.
inline constexpr int kAttentionProbabilityScale = -7;  // p in [0, 1]: 1 is code 128, max 1.875
inline constexpr int kFp8Panel = 32;                   // the FP8 matrix unit's K32 coefficient panel
struct AttentionPrecision {
  bool fp8 = false;
  int panel() const { return fp8 ? kFp8Panel : 0; }
};

// Attention in key blocks (docs/NUMERICS.md). For one head and a block of keys:
// scores s[i][j] = (sum_d q[i][d] k[j][d]) * scale in FP32 (the sum panel-rounded when
// FP8), stored key-major (scores[j * queries + i]), and each query's maximum over the
// block's keys.
void device_attention_scores(const float* q, int ldq, const float* k, int ldk, int queries, int keys, int head_dim,
                             float scale, float* scores, float* row_max, AttentionPrecision precision = {});
// With the key-major scores and the row maxima m over ALL key blocks: e = exp(s - m)
// (FP32), l_b = sum_j e (FP32, j ascending), p = fp16(e) (FP8: then F143 at
// kAttentionProbabilityScale), o_b[d] = sum_j p_j v[j][d] (FP32, j ascending; FP8: rounded
// to FP16 after every 32 keys). Writes partial[i] = {o_b[0..head_dim), l_b}. p goes to
// `probabilities`, key-major like the scores (it may be `scores` itself).
void device_attention_values(const float* scores, float* probabilities, const float* row_max, int queries, int keys,
                             const float* v, int ldv, int head_dim, float* partial, AttentionPrecision precision = {});
// Every value replaced by its F143 rounding at `scale` (decode(encode(x))), through the
// bulk vector codecs: the same values as numerics::fp8_round.
void device_round_f143(float* data, std::size_t count, int scale);
// Combines the key blocks' partials [blocks][rows][head_dim + 1] in block order:
// l = sum_b l_b, o = sum_b o_b (FP32), out = fp16(o / l).
void device_attention_combine(const float* partials, int blocks, int rows, int head_dim, float* out, int ldo);

// out[i] = device_exp(x[i] - subtract).
void device_exp_array(const float* x, float subtract, float* out, std::size_t count);

// Softmax state for one attention row, in place: s[j] <- fp16(exp(s[j]*scale - max)),
// returns the FP32 sum of the unrounded exponentials (the normaliser l).
float device_softmax_row(float* s, int keys, float scale);

// out[d] = fp16(o[d] / l): the attention output after the P.V product.
void device_normalise_row(const float* o, float l, float* out, int count);

}  // namespace tilevit::numerics
