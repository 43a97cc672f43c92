// The public device kernels: each call goes to the kernel table of the path in effect
// (kernel_path.hpp). The tables give identical results, so the choice is one of speed.
#include "numerics/device_kernels.hpp"

#include <algorithm>
#include <cstdint>

#include "numerics/device_kernel_table.hpp"
#include "numerics/fp8.hpp"

namespace tilevit::numerics {
namespace {

const KernelTable& kernels() {
  switch (kernel_path()) {
    case KernelPath::avx512: return kAvx512Kernels;
    case KernelPath::avx2: return kAvx2Kernels;
    case KernelPath::scalar: break;
  }
  return kScalarKernels;
}

}  // namespace

float* line_aligned(std::vector<float>& storage, std::size_t n) {
  constexpr std::size_t kLine = 64 / sizeof(float);
  if (storage.size() < n + kLine) storage.resize(n + kLine);
  const std::size_t misfit = reinterpret_cast<std::uintptr_t>(storage.data()) % 64 / sizeof(float);
  return storage.data() + (misfit == 0 ? 0 : kLine - misfit);
}

void device_gemm(const DeviceGemm& g) { kernels().gemm(g); }

void device_reduce_add(const float* partials, int count_partials, std::size_t count, float* out) {
  kernels().reduce_add(partials, count_partials, count, out);
}

void device_reduce_add_fp16(const std::uint16_t* partials, int count_partials, std::size_t count, std::uint16_t* out) {
  kernels().reduce_add_fp16(partials, count_partials, count, out);
}

void device_add(const float* a, const float* b, float* out, std::size_t count) { kernels().add(a, b, out, count); }

void device_add_fp16(const std::uint16_t* a, const std::uint16_t* b, std::uint16_t* out, std::size_t count) {
  kernels().add_fp16(a, b, out, count);
}

void device_layernorm_row(const float* x, const float* gamma, const float* beta, float* out, int width, float eps) {
  kernels().layernorm_row(x, gamma, beta, out, width, eps);
}

void device_gelu(const float* x, float* out, std::size_t count) { kernels().gelu(x, out, count); }

void device_attention_scores(const float* q, int ldq, const float* k, int ldk, int queries, int keys, int head_dim,
                             float scale, float* scores, float* row_max, AttentionPrecision precision) {
  kernels().attention_scores(q, ldq, k, ldk, queries, keys, head_dim, scale, scores, row_max, precision);
}

void device_attention_values(const float* scores, float* probabilities, const float* row_max, int queries, int keys,
                             const float* v, int ldv, int head_dim, float* partial, AttentionPrecision precision) {
  kernels().attention_values(scores, probabilities, row_max, queries, keys, v, ldv, head_dim, partial, precision);
}

void device_round_f143(float* data, std::size_t count, int scale) {
  // In L1-sized pieces; element-wise, so the pieces change no value.
  constexpr std::size_t kPiece = 4096;
  thread_local std::uint8_t codes[kPiece];
  for (std::size_t i = 0; i < count; i += kPiece) {
    const std::size_t n = std::min(kPiece, count - i);
    fp8_encode(data + i, codes, n, Fp8Format::F143, scale);
    fp8_decode(codes, data + i, n, Fp8Format::F143, scale);
  }
}

void device_attention_combine(const float* partials, int blocks, int rows, int head_dim, float* out, int ldo) {
  kernels().attention_combine(partials, blocks, rows, head_dim, out, ldo);
}

void device_exp_array(const float* x, float subtract, float* out, std::size_t count) {
  kernels().exp_array(x, subtract, out, count);
}

float device_softmax_row(float* s, int keys, float scale) { return kernels().softmax_row(s, keys, scale); }

void device_normalise_row(const float* o, float l, float* out, int count) { kernels().normalise_row(o, l, out, count); }

}  // namespace tilevit::numerics
