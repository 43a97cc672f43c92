#include "numerics/fp8.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

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

void fp8_encode(const float* in, std::uint8_t* out, std::size_t count, Fp8Format format, int scale) {
  check_scale(scale);
  const Fp8Spec spec = fp8_spec(format);
  const float inverse_scale = std::ldexp(1.0f, -scale);
  const std::int64_t n = static_cast<std::int64_t>(count);
#pragma omp parallel for schedule(static) if (n > 65536)
  for (std::int64_t i = 0; i < n; ++i) out[i] = encode_unchecked(in[i], spec, inverse_scale);
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
