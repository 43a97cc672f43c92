#pragma once
// exp and tanh for the device numerics. Written out here (not libm) so the result of
// every call is fixed by this source: the reference and the device model call the same
// functions and agree bit for bit on any host. Accuracy: about 2 ulp in FP32.
#include <cstdint>
#include <cstring>

namespace tilevit::numerics {

inline float device_exp(float x) {
  if (x > 88.0f) x = 88.0f;
  if (x < -87.0f) return 0.0f;  // below the smallest normal: flush (the device does too)
  const float log2e = 1.44269504088896341f;
  const float ln2_hi = 0.693145751953125f;     // exactly representable, 16 low bits zero
  const float ln2_lo = 1.428606765330187e-06f;
  const float n = __builtin_nearbyintf(x * log2e);
  const float r = (x - n * ln2_hi) - n * ln2_lo;  // |r| <= ln2/2, exact first step
  // Taylor/minimax polynomial of e^r on [-ln2/2, ln2/2], Horner form.
  float p = 1.98412698e-4f;
  p = p * r + 1.38888889e-3f;
  p = p * r + 8.33333333e-3f;
  p = p * r + 4.16666667e-2f;
  p = p * r + 1.66666667e-1f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const std::int32_t bits = (static_cast<std::int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

inline float device_tanh(float x) {
  const float a = x < 0 ? -x : x;
  float t;
  if (a > 9.0f) {
    t = 1.0f;
  } else {
    const float e = device_exp(2.0f * a);
    t = 1.0f - 2.0f / (e + 1.0f);
  }
  return x < 0 ? -t : t;
}

}  // namespace tilevit::numerics
