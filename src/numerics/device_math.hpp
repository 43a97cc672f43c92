#pragma once
// exp and tanh for the device numerics. Written out here (not libm) so the result of
// every call is fixed by this source: the reference and the device model call the same
// functions and agree bit for bit on any host. Accuracy: about 2 ulp in FP32.
#include <cstdint>
#include <cstring>

namespace tilevit::numerics {

// device_exp's constants, shared with its vector forms (device_kernels_avx2.cpp,
// device_kernels_avx512.cpp), which must compute the same operations on them.
inline constexpr float kExpClampAbove = 88.0f;
inline constexpr float kExpFlushBelow = -87.0f;  // below the smallest normal: flush (the device does too)
inline constexpr float kExpLog2e = 1.44269504088896341f;
inline constexpr float kExpLn2Hi = 0.693145751953125f;  // exactly representable, 16 low bits zero
inline constexpr float kExpLn2Lo = 1.428606765330187e-06f;
// Taylor/minimax polynomial of e^r on [-ln2/2, ln2/2], Horner form, highest degree first.
inline constexpr float kExpPolynomial[8] = {1.98412698e-4f, 1.38888889e-3f, 8.33333333e-3f, 4.16666667e-2f,
                                            1.66666667e-1f, 0.5f,           1.0f,           1.0f};

inline float device_exp(float x) {
  if (x > kExpClampAbove) x = kExpClampAbove;
  if (x < kExpFlushBelow) return 0.0f;
  const float n = __builtin_nearbyintf(x * kExpLog2e);
  const float r = (x - n * kExpLn2Hi) - n * kExpLn2Lo;  // |r| <= ln2/2, exact first step
  float p = kExpPolynomial[0];
  for (int i = 1; i < 8; ++i) p = p * r + kExpPolynomial[i];
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

// erf by Eigen's rational approximation for float (generic_fast_erf_float: the input
// clamped to [-4, 4], odd polynomial over even polynomial in x^2), Horner form in this
// fixed order. Accuracy: about 2 ulp in FP32 (erf(4) rounds to 1).
inline constexpr float kErfClamp = 4.0f;
inline constexpr float kErfAlpha[7] = {-2.72614225801306e-10f, 2.77068142495902e-08f, -2.10102402082508e-06f,
                                       -5.69250639462346e-05f, -7.34990630326855e-04f, -2.95459980854025e-03f,
                                       -1.60960333262415e-02f};
inline constexpr float kErfBeta[5] = {-1.45660718464996e-05f, -2.13374055278905e-04f, -1.68282697438203e-03f,
                                      -7.37332916720468e-03f, -1.42647390514189e-02f};

inline float device_erf(float x) {
  if (x > kErfClamp) x = kErfClamp;
  if (x < -kErfClamp) x = -kErfClamp;
  const float x2 = x * x;
  float p = kErfAlpha[0];
  for (int i = 1; i < 7; ++i) p = p * x2 + kErfAlpha[i];
  float q = kErfBeta[0];
  for (int i = 1; i < 5; ++i) q = q * x2 + kErfBeta[i];
  return (x * p) / q;
}

}  // namespace tilevit::numerics
