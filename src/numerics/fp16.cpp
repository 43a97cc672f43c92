#include "numerics/fp16.hpp"

#include "numerics/kernel_path.hpp"

namespace tilevit::numerics {
namespace {

// The same conversions 16 lanes at a time (AVX-512: the instructions round and convert
// exactly as F16C's 8-lane ones do), the tail as masked lanes.
#define TV_AVX512 __attribute__((target("avx512f,avx512vl,avx512bw,f16c")))
// GCC 12 reports the intrinsics' own "undefined" pass-through operand as maybe
// uninitialized here (a false positive: the conversions are unmasked).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

TV_AVX512 void round_512(float* data, std::size_t count) {
  std::size_t i = 0;
  for (; i + 16 <= count; i += 16) _mm512_storeu_ps(data + i, _mm512_cvtph_ps(_mm512_cvtps_ph(_mm512_loadu_ps(data + i), kRound)));
  if (i < count) {
    const __mmask16 m = static_cast<__mmask16>((1u << (count - i)) - 1);
    _mm512_mask_storeu_ps(data + i, m, _mm512_cvtph_ps(_mm512_cvtps_ph(_mm512_maskz_loadu_ps(m, data + i), kRound)));
  }
}

TV_AVX512 void to_bits_512(const float* in, std::uint16_t* out, std::size_t count) {
  std::size_t i = 0;
  for (; i + 16 <= count; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm512_cvtps_ph(_mm512_loadu_ps(in + i), kRound));
  if (i < count) {
    const __mmask16 m = static_cast<__mmask16>((1u << (count - i)) - 1);
    _mm256_mask_storeu_epi16(out + i, m, _mm512_cvtps_ph(_mm512_maskz_loadu_ps(m, in + i), kRound));
  }
}

TV_AVX512 void from_bits_512(const std::uint16_t* in, float* out, std::size_t count) {
  std::size_t i = 0;
  for (; i + 16 <= count; i += 16)
    _mm512_storeu_ps(out + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i))));
  if (i < count) {
    const __mmask16 m = static_cast<__mmask16>((1u << (count - i)) - 1);
    _mm512_mask_storeu_ps(out + i, m, _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, in + i)));
  }
}

TV_AVX512 void from_bits_rows_512(const std::uint16_t* in, std::size_t in_stride, float* out, std::size_t out_stride,
                                  std::size_t rows, std::size_t cols) {
  const std::size_t full = cols & ~std::size_t(15);
  const __mmask16 m = static_cast<__mmask16>((1u << (cols - full)) - 1);
  for (std::size_t r = 0; r < rows; ++r, in += in_stride, out += out_stride) {
    for (std::size_t i = 0; i < full; i += 16)
      _mm512_storeu_ps(out + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i))));
    if (m) _mm512_mask_storeu_ps(out + full, m, _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, in + full)));
  }
}

#pragma GCC diagnostic pop

}  // namespace

// Each conversion on the lanes of the path in effect (kernel_path.hpp): whole vectors, then
// the scalar conversion for the rest.
void round_fp16(float* data, std::size_t count) {
  const KernelPath path = kernel_path();
  if (path == KernelPath::avx512) return round_512(data, count);
  std::size_t i = 0;
  for (; path == KernelPath::avx2 && i + 8 <= count; i += 8)
    _mm256_storeu_ps(data + i, _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_loadu_ps(data + i), kRound)));
  for (; i < count; ++i) data[i] = round_fp16(data[i]);
}

void to_fp16_bits(const float* in, std::uint16_t* out, std::size_t count) {
  const KernelPath path = kernel_path();
  if (path == KernelPath::avx512) return to_bits_512(in, out, count);
  std::size_t i = 0;
  for (; path == KernelPath::avx2 && i + 8 <= count; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm256_cvtps_ph(_mm256_loadu_ps(in + i), kRound));
  for (; i < count; ++i) out[i] = fp16_bits(in[i]);
}

void from_fp16_bits(const std::uint16_t* in, float* out, std::size_t count) {
  const KernelPath path = kernel_path();
  if (path == KernelPath::avx512) return from_bits_512(in, out, count);
  std::size_t i = 0;
  for (; path == KernelPath::avx2 && i + 8 <= count; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
  for (; i < count; ++i) out[i] = fp16_value(in[i]);
}

void from_fp16_bits_rows(const std::uint16_t* in, std::size_t in_stride, float* out, std::size_t out_stride, std::size_t rows,
                         std::size_t cols) {
  if (kernel_path() == KernelPath::avx512) return from_bits_rows_512(in, in_stride, out, out_stride, rows, cols);
  for (std::size_t r = 0; r < rows; ++r) from_fp16_bits(in + r * in_stride, out + r * out_stride, cols);
}

}  // namespace tilevit::numerics
