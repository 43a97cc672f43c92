#include "numerics/fp8.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "numerics/cpu.hpp"
#include "support/error.hpp"

namespace tilevit::numerics {

Fp8Spec fp8_spec(Fp8Format format) {
  return format == Fp8Format::F143 ? Fp8Spec{8, 3, 240.0f} : Fp8Spec{16, 2, 57344.0f};
}

const char* fp8_name(Fp8Format format) { return format == Fp8Format::F143 ? "F143" : "F152"; }

static void check_scale(int scale) {
  if (scale < kMinFp8Scale || scale > kMaxFp8Scale)
    throw Error("fp8 scale " + std::to_string(scale) + " is outside [-31, 31]", kExitUsage);
}

namespace {

// Encoding on the float's bits: |x| * 2^-scale is exact in float for every value that
// can encode to a non-zero code, and rounding to m_bits is integer arithmetic with
// ties to even; a carry out of the mantissa bumps the exponent on its own.
inline std::uint8_t encode_unchecked(float x, const Fp8Spec& spec, float inverse_scale) {
  if (std::isnan(x)) return kFp8NaN;
  const float y = x * inverse_scale;
  const bool negative = y < 0;
  const float a = std::fabs(y);
  const int m_bits = spec.mantissa_bits;
  unsigned code;
  if (a >= spec.max_value) {
    code = 0x7F;
  } else if (a < std::ldexp(1.0f, 1 - spec.exponent_bias)) {
    // Subnormal quanta of 2^(1 - bias - m_bits); 2^m_bits is the smallest normal's code.
    code = static_cast<unsigned>(std::nearbyint(a * std::ldexp(1.0f, spec.exponent_bias - 1 + m_bits)));
  } else {
    std::uint32_t bits;
    std::memcpy(&bits, &a, sizeof bits);
    const int shift = 23 - m_bits;
    const std::uint32_t rebias = static_cast<std::uint32_t>(127 - spec.exponent_bias) << 23;
    const std::uint32_t round = ((1u << (shift - 1)) - 1) + ((bits >> shift) & 1u);
    code = (bits - rebias + round) >> shift;
    if (code > 0x7F) code = 0x7F;
  }
  if (code == 0) return 0x00;  // no negative zero
  return static_cast<std::uint8_t>(negative ? (code | 0x80) : code);
}

}  // namespace

std::uint8_t fp8_encode(float x, Fp8Format format, int scale) {
  check_scale(scale);
  return encode_unchecked(x, fp8_spec(format), std::ldexp(1.0f, -scale));
}

float fp8_decode(std::uint8_t code, Fp8Format format, int scale) {
  check_scale(scale);
  if (code == kFp8NaN) return std::numeric_limits<float>::quiet_NaN();
  const Fp8Spec spec = fp8_spec(format);
  const int m_bits = spec.mantissa_bits;
  const int e = (code & 0x7F) >> m_bits;
  const int m = code & ((1 << m_bits) - 1);
  double magnitude = e == 0 ? std::ldexp(m, 1 - spec.exponent_bias - m_bits)
                            : std::ldexp((1 << m_bits) + m, e - spec.exponent_bias - m_bits);
  magnitude = std::ldexp(magnitude, scale);
  return static_cast<float>((code & 0x80) ? -magnitude : magnitude);
}

std::array<float, 256> fp8_decode_table(Fp8Format format, int scale) {
  std::array<float, 256> table{};
  for (int c = 0; c < 256; ++c) table[c] = fp8_decode(static_cast<std::uint8_t>(c), format, scale);
  return table;
}

namespace {

// The F143 decode below, 32 codes at a time (the device model decodes every GEMM
// operand, ~40 K codes per kernel call). A code sign-extended to 16 bits and shifted left
// by 7 has exponent and mantissa in place (binary16 bits 7..13) and the sign in bits 14
// and 15; clearing bit 14 leaves the same binary16 bits as the AVX2 loop's. 0x80 (NaN)
// becomes 0x8000 there and is swapped for binary16's quiet NaN, which converts to the
// table's float quiet NaN (0x7FC00000) and stays it when multiplied.
__attribute__((target("avx512f,avx512bw,avx512vl,f16c"))) std::size_t decode_f143_512(const std::uint8_t* in, float* out,
                                                                                     std::size_t count, float factor) {
  const __m512 f = _mm512_set1_ps(factor);
  const __m512i keep = _mm512_set1_epi16(static_cast<short>(0xBFFF)), nan_code = _mm512_set1_epi16(static_cast<short>(0x8000)),
                nan_half = _mm512_set1_epi16(0x7E00);
  std::size_t i = 0;
  for (; i + 32 <= count; i += 32) {
    const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
    __m512i h = _mm512_and_si512(_mm512_slli_epi16(_mm512_cvtepi8_epi16(c), 7), keep);
    h = _mm512_mask_mov_epi16(h, _mm512_cmpeq_epi16_mask(h, nan_code), nan_half);
    _mm512_storeu_ps(out + i, _mm512_mul_ps(_mm512_cvtph_ps(_mm512_castsi512_si256(h)), f));
    _mm512_storeu_ps(out + i + 16, _mm512_mul_ps(_mm512_cvtph_ps(_mm512_extracti64x4_epi64(h, 1)), f));
  }
  return i;
}

}  // namespace

void fp8_decode(const std::uint8_t* in, float* out, std::size_t count, Fp8Format format, int scale) {
  check_scale(scale);
  std::size_t i = 0;
  if (format == Fp8Format::F143) {
    if (has_avx512()) i = decode_f143_512(in, out, count, std::ldexp(1.0f, 7 + scale));
    // F143 code c -> binary16 bits ((c & 0x7F) << 7) | ((c & 0x80) << 8): exponent and
    // mantissa land in place with bias 15 instead of 8 (subnormals included), so the
    // binary16 value is the F143 value x 2^-7; x 2^(7 + scale) is exact in FP32.
    // 0x80 (NaN) would become -0 and is patched to the table's quiet NaN.
    const __m256 factor = _mm256_set1_ps(std::ldexp(1.0f, 7 + scale));
    const __m256 nan = _mm256_set1_ps(std::numeric_limits<float>::quiet_NaN());
    const __m128i low = _mm_set1_epi16(0x7F), sign = _mm_set1_epi16(0x80);
    for (; i + 8 <= count; i += 8) {
      const __m128i c = _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(in + i)));
      const __m128i h = _mm_or_si128(_mm_slli_epi16(_mm_and_si128(c, low), 7), _mm_slli_epi16(_mm_and_si128(c, sign), 8));
      const __m256 v = _mm256_mul_ps(_mm256_cvtph_ps(h), factor);
      const __m256 is_nan = _mm256_castsi256_ps(_mm256_cvtepi16_epi32(_mm_cmpeq_epi16(c, sign)));
      _mm256_storeu_ps(out + i, _mm256_blendv_ps(v, nan, is_nan));
    }
    const float f = std::ldexp(1.0f, 7 + scale);
    for (; i < count; ++i) {
      const unsigned c = in[i];
      out[i] = c == kFp8NaN ? std::numeric_limits<float>::quiet_NaN()
                            : _cvtsh_ss(static_cast<unsigned short>(((c & 0x7F) << 7) | ((c & 0x80) << 8))) * f;
    }
    return;
  }
  const auto table = fp8_decode_table(format, scale);
  for (; i < count; ++i) out[i] = table[in[i]];
}

namespace {

// The powers of two of encode_unchecked, computed once per array (std::ldexp per block
// of 8 cost more than the encoding).
struct EncodeConstants {
  float sub_factor, smallest_normal;
  explicit EncodeConstants(const Fp8Spec& spec)
      : sub_factor(std::ldexp(1.0f, spec.exponent_bias - 1 + spec.mantissa_bits)),
        smallest_normal(std::ldexp(1.0f, 1 - spec.exponent_bias)) {}
};

// encode_unchecked on 8 lanes: every branch computed, then selected; the same integer
// rounding, so each byte equals the scalar one.
void encode_block8(const float* in, std::uint8_t* out, const Fp8Spec& spec, const EncodeConstants& k, float inverse_scale) {
  const __m256 x = _mm256_loadu_ps(in);
  const __m256 y = _mm256_mul_ps(x, _mm256_set1_ps(inverse_scale));
  const __m256 a = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), y);
  const int m_bits = spec.mantissa_bits, shift = 23 - m_bits;
  // Subnormal quanta: nearbyint(a * 2^(bias - 1 + m)) with the default round-to-even.
  const __m256i sub = _mm256_cvtps_epi32(_mm256_mul_ps(a, _mm256_set1_ps(k.sub_factor)));
  const __m256i bits = _mm256_castps_si256(a);
  const __m256i rebias = _mm256_set1_epi32(static_cast<int>(static_cast<std::uint32_t>(127 - spec.exponent_bias) << 23));
  const __m256i round = _mm256_add_epi32(_mm256_set1_epi32((1 << (shift - 1)) - 1),
                                         _mm256_and_si256(_mm256_srli_epi32(bits, shift), _mm256_set1_epi32(1)));
  __m256i normal = _mm256_srli_epi32(_mm256_add_epi32(_mm256_sub_epi32(bits, rebias), round), shift);
  normal = _mm256_min_epu32(normal, _mm256_set1_epi32(0x7F));
  const __m256 is_sub = _mm256_cmp_ps(a, _mm256_set1_ps(k.smallest_normal), _CMP_LT_OQ);
  const __m256 is_max = _mm256_cmp_ps(a, _mm256_set1_ps(spec.max_value), _CMP_GE_OQ);
  __m256i code = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(normal), _mm256_castsi256_ps(sub), is_sub));
  code = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(code), _mm256_castsi256_ps(_mm256_set1_epi32(0x7F)), is_max));
  const __m256i zero = _mm256_cmpeq_epi32(code, _mm256_setzero_si256());
  const __m256 negative = _mm256_cmp_ps(y, _mm256_setzero_ps(), _CMP_LT_OQ);
  const __m256i sign = _mm256_andnot_si256(zero, _mm256_and_si256(_mm256_castps_si256(negative), _mm256_set1_epi32(0x80)));
  code = _mm256_or_si256(code, sign);
  const __m256 is_nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
  code = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(code), _mm256_castsi256_ps(_mm256_set1_epi32(kFp8NaN)), is_nan));
  const __m128i words = _mm_packus_epi32(_mm256_castsi256_si128(code), _mm256_extracti128_si256(code, 1));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(out), _mm_packus_epi16(words, words));
}

// encode_block8 on 16 lanes with AVX-512: the same operations in the same order (the
// blends are mask moves), so each byte equals the 8-lane and the scalar one.
__attribute__((target("avx512f,avx512bw,avx512vl"))) std::size_t encode_512(const float* in, std::uint8_t* out,
                                                                               std::size_t count, const Fp8Spec& spec,
                                                                               const EncodeConstants& k, float inverse_scale) {
  const int m_bits = spec.mantissa_bits, shift = 23 - m_bits;
  const __m512 inv = _mm512_set1_ps(inverse_scale), sub_factor = _mm512_set1_ps(k.sub_factor);
  const __m512 smallest_normal = _mm512_set1_ps(k.smallest_normal), max = _mm512_set1_ps(spec.max_value);
  const __m512i rebias = _mm512_set1_epi32(static_cast<int>(static_cast<std::uint32_t>(127 - spec.exponent_bias) << 23));
  const __m512i half = _mm512_set1_epi32((1 << (shift - 1)) - 1), one = _mm512_set1_epi32(1), top = _mm512_set1_epi32(0x7F);
  const __m512i sign_bit = _mm512_set1_epi32(0x80), nan = _mm512_set1_epi32(kFp8NaN);
  std::size_t i = 0;
  for (; i + 16 <= count; i += 16) {
    const __m512 x = _mm512_loadu_ps(in + i);
    const __m512 y = _mm512_mul_ps(x, inv);
    const __m512 a = _mm512_abs_ps(y);
    const __m512i sub = _mm512_cvtps_epi32(_mm512_mul_ps(a, sub_factor));
    const __m512i bits = _mm512_castps_si512(a);
    const __m512i round = _mm512_add_epi32(half, _mm512_and_si512(_mm512_srli_epi32(bits, shift), one));
    __m512i code = _mm512_srli_epi32(_mm512_add_epi32(_mm512_sub_epi32(bits, rebias), round), shift);
    code = _mm512_min_epu32(code, top);
    code = _mm512_mask_mov_epi32(code, _mm512_cmp_ps_mask(a, smallest_normal, _CMP_LT_OQ), sub);
    code = _mm512_mask_mov_epi32(code, _mm512_cmp_ps_mask(a, max, _CMP_GE_OQ), top);
    const __mmask16 negative_nonzero =
        _mm512_cmp_ps_mask(y, _mm512_setzero_ps(), _CMP_LT_OQ) & _mm512_cmpneq_epi32_mask(code, _mm512_setzero_si512());
    code = _mm512_mask_or_epi32(code, negative_nonzero, code, sign_bit);
    code = _mm512_mask_mov_epi32(code, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), nan);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm512_cvtepi32_epi8(code));
  }
  return i;
}

// One range on the widest lanes the CPU has, the tail scalar.
void encode_range(const float* in, std::uint8_t* out, std::size_t count, const Fp8Spec& spec, const EncodeConstants& k,
                  float inverse_scale) {
  std::size_t i = has_avx512() ? encode_512(in, out, count, spec, k, inverse_scale) : 0;
  for (; i + 8 <= count; i += 8) encode_block8(in + i, out + i, spec, k, inverse_scale);
  for (; i < count; ++i) out[i] = encode_unchecked(in[i], spec, inverse_scale);
}

}  // namespace

void fp8_encode(const float* in, std::uint8_t* out, std::size_t count, Fp8Format format, int scale) {
  check_scale(scale);
  const Fp8Spec spec = fp8_spec(format);
  const float inverse_scale = std::ldexp(1.0f, -scale);
  const EncodeConstants constants(spec);
  // Element-wise, so pieces in parallel give the same bytes. Small arrays (the device
  // model's casts) skip the OpenMP construct: even an inactive parallel region sets up a team.
  constexpr std::size_t kPiece = 8192;
  if (count > 8 * kPiece) {
    const std::int64_t pieces = static_cast<std::int64_t>((count + kPiece - 1) / kPiece);
#pragma omp parallel for schedule(static)
    for (std::int64_t p = 0; p < pieces; ++p) {
      const std::size_t begin = static_cast<std::size_t>(p) * kPiece;
      encode_range(in + begin, out + begin, std::min(kPiece, count - begin), spec, constants, inverse_scale);
    }
  } else {
    encode_range(in, out, count, spec, constants, inverse_scale);
  }
}

void fp8_round(float* data, std::size_t count, Fp8Format format, int scale) {
  check_scale(scale);
  const auto table = fp8_decode_table(format, scale);
  const Fp8Spec spec = fp8_spec(format);
  const float inverse_scale = std::ldexp(1.0f, -scale);
  const std::int64_t n = static_cast<std::int64_t>(count);
#pragma omp parallel for schedule(static) if (n > 65536)
  for (std::int64_t i = 0; i < n; ++i) data[i] = table[encode_unchecked(data[i], spec, inverse_scale)];
}

}  // namespace tilevit::numerics
