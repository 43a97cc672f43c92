#include "model/config.hpp"

#include <string>

#include "support/error.hpp"

namespace tilevit::model {

const char* family_name(Family family) {
  switch (family) {
    case Family::siglip: return "siglip";
    case Family::clip: return "clip";
    case Family::dinov2: return "dinov2";
    case Family::vit: return "vit";
  }
  return "?";
}

const char* activation_name(Activation activation) {
  switch (activation) {
    case Activation::gelu_tanh: return "gelu_pytorch_tanh";
    case Activation::gelu_erf: return "gelu";
    case Activation::quick_gelu: return "quick_gelu";
  }
  return "?";
}

const char* pooling_name(Pooling pooling) {
  switch (pooling) {
    case Pooling::map_head: return "map_head";
    case Pooling::class_token: return "class_token";
    case Pooling::tokens: return "tokens";
    case Pooling::hidden_state: return "hidden_state";
  }
  return "?";
}

int ViTConfig::output_rows() const {
  return pooling == Pooling::map_head || pooling == Pooling::class_token ? 1 : tokens();
}

int ViTConfig::output_width() const {
  return pooling == Pooling::class_token && projection_dim > 0 ? projection_dim : width;
}

std::vector<std::int64_t> ViTConfig::output_shape() const {
  if (output_rows() == 1) return {batch, output_width()};
  return {batch, output_rows(), output_width()};
}

std::int64_t ViTConfig::parameter_count() const {
  const std::int64_t w = width, m = mlp, p = patch_dim();
  const std::int64_t layer = 2 * 2 * w            // two LayerNorms
                             + 4 * (w * w + w)    // q, k, v, out projections
                             + (w * m + m) + (m * w + w) + (layer_scale ? 2 * w : 0);
  std::int64_t embeddings = p * w + (patch_bias ? w : 0) + std::int64_t{position_rows()} * w;
  if (class_token) embeddings += w;
  embeddings += std::int64_t{register_tokens} * w;
  if (family == Family::dinov2) embeddings += w;  // mask_token (held, unused for inference)
  std::int64_t head = 0;
  if (family == Family::siglip)
    head = w                          // probe
           + 3 * w * w + 3 * w          // in_proj
           + w * w + w                  // out_proj
           + 2 * w                      // layernorm
           + (w * m + m) + (m * w + w);  // mlp
  const std::int64_t norms = 2 * w + (pre_layernorm ? 2 * w : 0);
  return embeddings + max_layers * layer + norms + head + std::int64_t{projection_dim} * w;
}

double ViTConfig::flops_per_image() const {
  const double w = width, m = mlp, t = tokens(), p = patch_dim();
  const double dense = 2.0 * t * (3 * w * w + w * w + 2 * w * m);
  const double attention = 2.0 * 2.0 * t * t * w;  // QK^T and PV over all heads
  const double embed = 2.0 * patches() * p * w;
  double head = 0;
  if (pooling == Pooling::map_head) head = 2.0 * (w * w + t * 2 * w * w + t * w + w * w + 2 * w * m);
  if (pooling == Pooling::class_token) head = 2.0 * w * projection_dim;
  return embed + layers * (dense + attention) + head;
}

void ViTConfig::validate() const {
  auto fail = [&](const std::string& field, long value, const std::string& why) {
    throw Error("model config " + name + ": " + field + " = " + std::to_string(value) + ": " + why, kExitUsage);
  };
  if (patch < 1 || patch > 64) fail("patch", patch, "must be in [1, 64]");
  if (channels != 3) fail("channels", channels, "must be 3 (RGB)");
  if (image_size < patch || image_size % patch != 0) fail("image_size", image_size, "must be a multiple of the patch size");
  if (resize_size < image_size || resize_size > 4096) fail("resize_size", resize_size, "must be in [image_size, 4096]");
  if (head_dim < 1 || head_dim > 512) fail("head_dim", head_dim, "must be in [1, 512]");
  if (width < 1 || width > 16384) fail("width", width, "must be in [1, 16384]");
  // In 64 bits: a crafted heads value must not wrap heads x head_dim back to width.
  if (heads < 1 || std::int64_t{heads} * head_dim != width) fail("heads", heads, "heads x head_dim must equal width");
  if (mlp < 1 || mlp > 65536) fail("mlp", mlp, "must be in [1, 65536]");
  if (max_layers < 1 || max_layers > 1024) fail("max_layers", max_layers, "must be in [1, 1024]");
  if (layers < 1 || layers > max_layers)
    fail("layers", layers, "must be in [1, " + std::to_string(max_layers) + "] for this checkpoint");
  if (batch < 1 || batch > 64) fail("batch", batch, "must be in [1, 64]");
  if (register_tokens < 0 || register_tokens > 64) fail("register_tokens", register_tokens, "must be in [0, 64]");
  if (position_grid < 0 || position_grid > 1024) fail("position_grid", position_grid, "must be in [0, 1024]");
  if (table_grid() != grid() && position_resize == PositionResize::none)
    fail("image_size", image_size,
         "gives a " + std::to_string(grid()) + "x" + std::to_string(grid()) + " patch grid but the position table is " +
             std::to_string(table_grid()) + "x" + std::to_string(table_grid()) + " and " + family_name(family) +
             " does not interpolate it");
  // The attention scores of one head are tokens^2 floats: 16,384 tokens is 1 GiB.
  if (tokens() > 16384) fail("tokens", tokens(), "must be at most 16384");
  if (projection_dim < 0 || projection_dim > 65536) fail("projection_dim", projection_dim, "must be in [0, 65536]");
  if (pooling == Pooling::map_head && family != Family::siglip)
    fail("pooling", 0, "map_head: the MAP head exists only in SigLIP checkpoints");
  if (pooling == Pooling::class_token && !class_token)
    fail("pooling", 1, "class_token: class-token pooling needs a class token");
  if (preprocessing.resample != 2 && preprocessing.resample != 3)
    fail("resample", preprocessing.resample, "must be 2 (bilinear) or 3 (bicubic)");
  for (int c = 0; c < 3; ++c)
    if (!(preprocessing.std[c] > 0.0f) || !(preprocessing.std[c] < 1e30f) || !(preprocessing.mean[c] > -1e30f) ||
        !(preprocessing.mean[c] < 1e30f))
      fail("image_std/image_mean channel", c, "must be finite, std positive");
  if (!(layer_norm_eps > 0.0f) || !(layer_norm_eps < 1.0f)) fail("layer_norm_eps", 0, "must be in (0, 1)");
}

}  // namespace tilevit::model
