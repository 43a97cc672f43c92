#pragma once
// Which precision each GEMM role runs in on the device, and its FP8 scale. Activations
// and weights of an FP8 GEMM share the role's power-of-two scale S (value = code x 2^S),
// as the original's --fp8-scale did; the product scale is 2S.
#include <array>
#include <string>

namespace tilevit::model {

enum class GemmRole {
  Embedding, Qkv, AttentionOut, MlpUp, MlpDown,
  MapQuery, MapKv, MapOut, MapMlpUp, MapMlpDown,
};
inline constexpr int kGemmRoleCount = 10;
const char* gemm_role_name(GemmRole role);

struct RolePrecision {
  bool fp8 = true;  // false: FP16 operands, FP32 accumulation
  int scale = -4;   // FP8 scale S in [-31, 31]
};

struct NumericsConfig {
  std::array<RolePrecision, kGemmRoleCount> roles{};

  const RolePrecision& role(GemmRole r) const { return roles[static_cast<int>(r)]; }
  // Every GEMM FP8 with the same scale (the original's --fp8-scale S). Throws Error if
  // S is outside [-31, 31].
  static NumericsConfig uniform(int scale);
  // Per-role scales that work for the real pretrained checkpoint (WORKLOAD.md):
  // FP16 input projection, QKV -2, attention output -4, MLP up +1, down -1, MAP query -12,
  // KV -1, output and MLP up -5, MLP down -6.
  static NumericsConfig calibrated();
  std::string describe() const;
};

}  // namespace tilevit::model
