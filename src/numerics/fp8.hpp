#pragma once
// Graphcore FP8 formats (WORKLOAD.md, "Numerics"): F143 = float8_e4m3fnuz and
// F152 = float8_e5m2fnuz. 0x80 is the only NaN; no infinities, no negative zero.
// A tensor carries a power-of-two scale S: value = decoded(code) * 2^S.
#include <array>
#include <cstddef>
#include <cstdint>

namespace tilevit::numerics {

enum class Fp8Format { F143, F152 };

struct Fp8Spec {
  int exponent_bias;   // 8 for F143, 16 for F152
  int mantissa_bits;   // 3 for F143, 2 for F152
  float max_value;     // 240 for F143, 57344 for F152
};
Fp8Spec fp8_spec(Fp8Format format);
const char* fp8_name(Fp8Format format);

constexpr int kMinFp8Scale = -31;
constexpr int kMaxFp8Scale = 31;
constexpr std::uint8_t kFp8NaN = 0x80;

// Encodes x / 2^scale: round to nearest even, finite overflow and +-inf saturate to
// +-max, NaN -> 0x80, anything that rounds to zero -> 0x00. Scale must be in [-31, 31].
std::uint8_t fp8_encode(float x, Fp8Format format, int scale);
// Decodes to code-value * 2^scale (exact in FP32); 0x80 -> quiet NaN.
float fp8_decode(std::uint8_t code, Fp8Format format, int scale);

// All 256 decoded values for one format and scale (for bulk decoding).
std::array<float, 256> fp8_decode_table(Fp8Format format, int scale);

// Bulk decode, identical to fp8_decode per element (F143 through F16C: the code shifted
// into binary16 is the value x 2^-7, made exact FP32 by one power-of-two multiply).
void fp8_decode(const std::uint8_t* in, float* out, std::size_t count, Fp8Format format, int scale);

void fp8_encode(const float* in, std::uint8_t* out, std::size_t count, Fp8Format format, int scale);
// Quantise in place: each value replaced by decode(encode(value)) (the value the
// device sees after a cast).
void fp8_round(float* data, std::size_t count, Fp8Format format, int scale);

}  // namespace tilevit::numerics
