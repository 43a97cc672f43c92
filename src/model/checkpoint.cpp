#include "model/checkpoint.hpp"

namespace tilevit::model {

std::vector<CheckpointTensor> checkpoint_tensors(const ViTConfig& c) {
  const std::int64_t w = c.width, m = c.mlp;
  std::vector<CheckpointTensor> t;
  auto add = [&](std::string name, std::vector<std::int64_t> shape, InitKind init, int fan_in = 0, int fan_out = 0) {
    t.push_back({kVisionPrefix + name, std::move(shape), init, fan_in, fan_out});
  };
  auto linear = [&](const std::string& name, std::int64_t out, std::int64_t in, std::int64_t xavier_out) {
    add(name + ".weight", {out, in}, InitKind::GemmWeight, static_cast<int>(in), static_cast<int>(xavier_out));
    add(name + ".bias", {out}, InitKind::Bias);
  };
  auto layer_norm = [&](const std::string& name) {
    add(name + ".weight", {w}, InitKind::LayerNormScale);
    add(name + ".bias", {w}, InitKind::Bias);
  };
  add("embeddings.patch_embedding.weight", {w, c.channels, c.patch, c.patch}, InitKind::GemmWeight, c.patch_dim(),
      c.width);
  add("embeddings.patch_embedding.bias", {w}, InitKind::Bias);
  add("embeddings.position_embedding.weight", {c.patches(), w}, InitKind::PositionEmbedding);
  for (int i = 0; i < c.layers; ++i) {
    const std::string p = "encoder.layers." + std::to_string(i) + ".";
    layer_norm(p + "layer_norm1");
    for (const char* proj : {"q_proj", "k_proj", "v_proj", "out_proj"}) linear(p + "self_attn." + proj, w, w, w);
    layer_norm(p + "layer_norm2");
    linear(p + "mlp.fc1", m, w, m);
    linear(p + "mlp.fc2", w, m, w);
  }
  layer_norm("post_layernorm");
  add("head.probe", {1, 1, w}, InitKind::Probe);
  // Fused q,k,v of the pooling attention: Xavier with the fan_out of one projection.
  add("head.attention.in_proj_weight", {3 * w, w}, InitKind::GemmWeight, c.width, c.width);
  add("head.attention.in_proj_bias", {3 * w}, InitKind::Bias);
  linear("head.attention.out_proj", w, w, w);
  layer_norm("head.layernorm");
  linear("head.mlp.fc1", m, w, m);
  linear("head.mlp.fc2", w, m, w);
  return t;
}

}  // namespace tilevit::model
