#include "model/checkpoint.hpp"

namespace tilevit::model {
namespace {

// Names of one family: the module paths of its model class.
struct Naming {
  std::string prefix;                       // before every vision tensor
  std::string patch, position, class_token, registers, mask_token, pre_ln, post_ln;
  std::string layer;                        // "encoder.layers." or "encoder.layer."
  std::string ln1, q, k, v, out, ln2, fc1, fc2, ls1, ls2;
  std::string weight = ".weight", bias = ".bias";
};

Naming naming(Family family) {
  switch (family) {
    case Family::siglip:
    case Family::clip:
      return {kVisionPrefix, "embeddings.patch_embedding", "embeddings.position_embedding.weight",
              "embeddings.class_embedding", "", "", "pre_layrnorm", "post_layernorm", "encoder.layers.",
              "layer_norm1", "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.out_proj",
              "layer_norm2", "mlp.fc1", "mlp.fc2", "", ""};
    case Family::dinov2:
      return {"", "embeddings.patch_embeddings.projection", "embeddings.position_embeddings", "embeddings.cls_token",
              "embeddings.register_tokens", "embeddings.mask_token", "", "layernorm", "encoder.layer.", "norm1",
              "attention.attention.query", "attention.attention.key", "attention.attention.value",
              "attention.output.dense", "norm2", "mlp.fc1", "mlp.fc2", "layer_scale1.lambda1", "layer_scale2.lambda1"};
    case Family::vit:
      return {"", "embeddings.patch_embeddings.projection", "embeddings.position_embeddings", "embeddings.cls_token",
              "", "", "", "layernorm", "encoder.layer.", "layernorm_before", "attention.attention.query",
              "attention.attention.key", "attention.attention.value", "attention.output.dense", "layernorm_after",
              "intermediate.dense", "output.dense", "", ""};
  }
  return {};
}

class Builder {
 public:
  Builder(const ViTConfig& c) : c_(c), n_(naming(c.family)), siglip_(c.family == Family::siglip) {}

  void add(const std::string& name, const std::string& key, std::vector<std::int64_t> shape, InitKind init,
           int fan_in = 0, int fan_out = 0) {
    out.push_back({n_.prefix + name, key, std::move(shape), init, fan_in, fan_out});
  }
  void linear(const std::string& name, const std::string& key, std::int64_t rows, std::int64_t cols,
              std::int64_t xavier_out, bool with_bias = true) {
    add(name + n_.weight, key + ".weight", {rows, cols}, InitKind::GemmWeight, static_cast<int>(cols),
        static_cast<int>(xavier_out));
    if (with_bias) add(name + n_.bias, key + ".bias", {rows}, bias_kind());
  }
  void layer_norm(const std::string& name, const std::string& key) {
    add(name + n_.weight, key + ".weight", {c_.width}, siglip_ ? InitKind::LayerNormScale : InitKind::VisibleScale);
    add(name + n_.bias, key + ".bias", {c_.width}, bias_kind());
  }
  InitKind bias_kind() const { return siglip_ ? InitKind::Bias : InitKind::VisibleBias; }

  void embeddings() {
    const std::int64_t w = c_.width;
    // HF keeps DINOv2/ViT tokens and tables with a leading batch axis of 1.
    const bool batch_axis = c_.family == Family::dinov2 || c_.family == Family::vit;
    if (c_.class_token)
      add(n_.class_token, "class_token", batch_axis ? std::vector<std::int64_t>{1, 1, w} : std::vector<std::int64_t>{w},
          InitKind::Probe);
    if (c_.family == Family::dinov2) add(n_.mask_token, "mask_token", {1, w}, InitKind::Probe);
    if (c_.register_tokens) add(n_.registers, "registers", {1, c_.register_tokens, w}, InitKind::Probe);
    add(n_.patch + n_.weight, "patch.weight", {w, c_.channels, c_.patch, c_.patch}, InitKind::GemmWeight,
        c_.patch_dim(), c_.width);
    if (c_.patch_bias) add(n_.patch + n_.bias, "patch.bias", {w}, bias_kind());
    if (batch_axis)
      add(n_.position, "position", {1, c_.position_rows(), w}, InitKind::PositionEmbedding);
    else
      add(n_.position, "position", {c_.position_rows(), w}, InitKind::PositionEmbedding);
    if (c_.pre_layernorm) layer_norm(n_.pre_ln, "pre_ln");
  }

  void encoder_layer(int i) {
    const std::int64_t w = c_.width, m = c_.mlp;
    const std::string p = n_.layer + std::to_string(i) + ".", k = "layer." + std::to_string(i) + ".";
    layer_norm(p + n_.ln1, k + "ln1");
    linear(p + n_.q, k + "q", w, w, w);
    linear(p + n_.k, k + "k", w, w, w);
    linear(p + n_.v, k + "v", w, w, w);
    linear(p + n_.out, k + "out", w, w, w);
    if (c_.layer_scale) add(p + n_.ls1, k + "ls1", {w}, InitKind::VisibleScale);
    layer_norm(p + n_.ln2, k + "ln2");
    linear(p + n_.fc1, k + "fc1", m, w, m);
    linear(p + n_.fc2, k + "fc2", w, m, w);
    if (c_.layer_scale) add(p + n_.ls2, k + "ls2", {w}, InitKind::VisibleScale);
  }

  void map_head() {
    const std::int64_t w = c_.width, m = c_.mlp;
    add("head.probe", "head.probe", {1, 1, w}, InitKind::Probe);
    // Fused q,k,v of the pooling attention: Xavier with the fan_out of one projection.
    add("head.attention.in_proj_weight", "head.in_proj.weight", {3 * w, w}, InitKind::GemmWeight, c_.width, c_.width);
    add("head.attention.in_proj_bias", "head.in_proj.bias", {3 * w}, InitKind::Bias);
    linear("head.attention.out_proj", "head.out", w, w, w);
    layer_norm("head.layernorm", "head.ln");
    linear("head.mlp.fc1", "head.fc1", m, w, m);
    linear("head.mlp.fc2", "head.fc2", w, m, w);
  }

  std::vector<CheckpointTensor> out;

 private:
  const ViTConfig& c_;
  const Naming n_;
  const bool siglip_;
};

}  // namespace

std::vector<CheckpointTensor> checkpoint_tensors(const ViTConfig& c) {
  Builder b(c);
  b.embeddings();
  for (int i = 0; i < c.layers; ++i) b.encoder_layer(i);
  b.layer_norm(naming(c.family).post_ln, "post_ln");
  if (c.family == Family::siglip) b.map_head();
  if (c.projection_dim) {
    // CLIPVisionModelWithProjection keeps the projection beside vision_model.
    b.out.push_back({"visual_projection.weight", "projection.weight", {c.projection_dim, c.width},
                     InitKind::GemmWeight, c.width, c.projection_dim});
  }
  return b.out;
}

std::string anchor_tensor(const ViTConfig& c) {
  const Naming n = naming(c.family);
  return n.prefix + n.patch + n.weight;
}

}  // namespace tilevit::model
