#pragma once
// Which instruction sets the vector paths may use, asked of the CPU once. Every path gives
// the same bits as the others, so this chooses speed only.

namespace tilevit::numerics {

// AVX-512 with the F, VL and BW subsets (what the 16-lane and masked-byte paths use).
inline bool has_avx512() {
  static const bool yes =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
  return yes;
}

}  // namespace tilevit::numerics
