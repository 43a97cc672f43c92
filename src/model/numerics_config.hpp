#pragma once
// Which precision each GEMM role runs in on the device, and its FP8 scale. Activations
// and weights of an FP8 GEMM share the role's power-of-two scale S (value = code x 2^S),
// as the original's --fp8-scale did; the product scale is 2S.
#include <array>
#include <cstdint>
#include <string>

namespace tilevit::model {

enum class GemmRole {
  Embedding, Qkv, AttentionOut, MlpUp, MlpDown,
  MapQuery, MapKv, MapOut, MapMlpUp, MapMlpDown,
  Projection,  // CLIP's visual projection of the pooled class token
};
inline constexpr int kGemmRoleCount = 11;
// SigLIP's roles, the ones every package records (Projection only when the model has one).
inline constexpr int kSiglipGemmRoles = 10;
const char* gemm_role_name(GemmRole role);

struct RolePrecision {
  bool fp8 = true;  // false: FP16 operands, FP32 accumulation
  int scale = -4;   // FP8 scale S in [-31, 31]
};

struct NumericsConfig {
  std::array<RolePrecision, kGemmRoleCount> roles{};
  // Partitioning that changes where sums are rounded, chosen by the compiler so the
  // device-numerics reference computes the same: the inner-dimension block of each GEMM
  // role (0 = unsplit) and the key block of encoder and MAP attention (0 = all keys).
  std::array<std::uint32_t, kGemmRoleCount> inner_block{};
  std::uint32_t attention_key_block = 0, map_attention_key_block = 0;
  // The column part of the encoder layers' LayerNorms when split over tiles (before the
  // attention, before the MLP; 0 = whole rows): the parts' moments are combined in order.
  std::array<std::uint32_t, 2> encoder_norm_part{};
  // FP8 attention products in the encoder layers (a plan choice, recorded like the splits):
  // Q, K and V cast to F143 at `attention_scale` in the QKV epilogue, FP8 QK^T and P.V
  // (numerics/device_kernels.hpp, AttentionPrecision). The scale is set with the roles'.
  bool attention_fp8 = false;
  int attention_scale = -4;

  std::uint32_t role_inner_block(GemmRole r) const { return inner_block[static_cast<int>(r)]; }

  const RolePrecision& role(GemmRole r) const { return roles[static_cast<int>(r)]; }
  // Every GEMM FP8 with the same scale (the original's --fp8-scale S). Throws Error if
  // S is outside [-31, 31].
  static NumericsConfig uniform(int scale);
  // Per-role scales that work for the real pretrained checkpoint (docs/NUMERICS.md):
  // FP16 input projection, QKV -2, attention output -4, MLP up +1, down -1, MAP query -12,
  // KV -1, output and MLP up -5, MLP down -6.
  static NumericsConfig calibrated();
  std::string describe() const;
};

}  // namespace tilevit::model
