#include "model/numerics_config.hpp"

#include "numerics/fp8.hpp"
#include "support/error.hpp"

namespace tilevit::model {

const char* gemm_role_name(GemmRole role) {
  static const char* names[kGemmRoleCount] = {"embedding", "qkv",    "attention_out", "mlp_up",     "mlp_down",
                                              "map_query", "map_kv", "map_out",       "map_mlp_up", "map_mlp_down",
                                              "projection"};
  return names[static_cast<int>(role)];
}

NumericsConfig NumericsConfig::uniform(int scale) {
  if (scale < numerics::kMinFp8Scale || scale > numerics::kMaxFp8Scale)
    throw Error("--fp8-scale " + std::to_string(scale) + " is outside [-31, 31]", kExitUsage);
  NumericsConfig c;
  for (auto& r : c.roles) r = RolePrecision{true, scale};
  c.attention_scale = scale;  // every FP8 operand at S, as the original's --fp8-scale
  return c;
}

NumericsConfig NumericsConfig::calibrated() {
  NumericsConfig c;
  auto set = [&](GemmRole r, bool fp8, int s) { c.roles[static_cast<int>(r)] = RolePrecision{fp8, s}; };
  set(GemmRole::Embedding, false, 0);
  set(GemmRole::Qkv, true, -2);
  set(GemmRole::AttentionOut, true, -4);
  set(GemmRole::MlpUp, true, 1);
  set(GemmRole::MlpDown, true, -1);
  set(GemmRole::MapQuery, true, -12);
  set(GemmRole::MapKv, true, -1);
  set(GemmRole::MapOut, true, -5);
  set(GemmRole::MapMlpUp, true, -5);
  set(GemmRole::MapMlpDown, true, -6);
  // Not measured on the checkpoint: the attention output role's, whose input is a convex
  // combination of V's rows (Q and K are not bounded by it).
  c.attention_scale = -4;
  return c;
}

std::string NumericsConfig::describe() const {
  std::string s;
  for (int i = 0; i < kGemmRoleCount; ++i) {
    if (i) s += ", ";
    s += gemm_role_name(static_cast<GemmRole>(i));
    s += roles[i].fp8 ? "=fp8(" + std::to_string(roles[i].scale) + ")" : "=fp16";
  }
  return s;
}

}  // namespace tilevit::model
