// Kernels of the CLIP, DINOv2 and google ViT towers (device_kernels.hpp): plain loops, one
// element at a time, each the definition and the only form.
#include "numerics/device_kernels.hpp"
#include "numerics/device_math.hpp"
#include "numerics/fp16.hpp"

namespace tilevit::numerics {

void device_gelu_erf(const float* x, float* out, std::size_t count) {
  const float inv_sqrt2 = 0.70710678118654752f;
  for (std::size_t i = 0; i < count; ++i) {
    const float v = x[i];
    out[i] = round_fp16((0.5f * v) * (1.0f + device_erf(v * inv_sqrt2)));
  }
}

void device_quick_gelu(const float* x, float* out, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    const float v = x[i];
    out[i] = round_fp16(v / (1.0f + device_exp(-1.702f * v)));
  }
}

void device_multiply(const float* a, const float* b, float* out, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) out[i] = round_fp16(a[i] * b[i]);
}

}  // namespace tilevit::numerics
