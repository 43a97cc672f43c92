#pragma once
// IEEE binary16 conversions, round to nearest even (the F16C instructions do exactly
// this). Device FP16 values are held on the host as floats that are exactly
// representable in binary16; round_fp16 is the single rounding point.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

namespace tilevit::numerics {

inline std::uint16_t fp16_bits(float x) {
  return static_cast<std::uint16_t>(_cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
inline float fp16_value(std::uint16_t bits) { return _cvtsh_ss(bits); }
inline float round_fp16(float x) { return fp16_value(fp16_bits(x)); }

// The bulk forms, on the lanes of kernel_path() (kernel_path.hpp); each element equals
// the scalar conversion above.
// In place: every element rounded to the nearest binary16 value (overflow -> +-inf).
void round_fp16(float* data, std::size_t count);
void to_fp16_bits(const float* in, std::uint16_t* out, std::size_t count);
void from_fp16_bits(const std::uint16_t* in, float* out, std::size_t count);
// `rows` rows of `cols` values, row r at in + r * in_stride and out + r * out_stride (one
// call instead of one per row: attention_values pads V's rows to whole cache lines).
void from_fp16_bits_rows(const std::uint16_t* in, std::size_t in_stride, float* out, std::size_t out_stride, std::size_t rows,
                         std::size_t cols);

}  // namespace tilevit::numerics
