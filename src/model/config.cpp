#include "model/config.hpp"

#include <string>

#include "support/error.hpp"

namespace tilevit::model {

std::int64_t ViTConfig::parameter_count() const {
  const std::int64_t w = width, m = mlp, p = patch_dim(), t = patches();
  const std::int64_t layer = 2 * 2 * w            // two LayerNorms
                             + 4 * (w * w + w)    // q, k, v, out projections
                             + (w * m + m) + (m * w + w);
  const std::int64_t head = w                          // probe
                            + 3 * w * w + 3 * w          // in_proj
                            + w * w + w                  // out_proj
                            + 2 * w                      // layernorm
                            + (w * m + m) + (m * w + w);  // mlp
  return (p * w + w) + t * w + max_layers * layer + 2 * w + head;
}

double ViTConfig::flops_per_image() const {
  const double w = width, m = mlp, t = patches(), p = patch_dim();
  const double dense = 2.0 * t * (3 * w * w + w * w + 2 * w * m);
  const double attention = 2.0 * 2.0 * t * t * w;  // QK^T and PV over all heads
  const double embed = 2.0 * t * p * w;
  const double head = 2.0 * (w * w + t * 2 * w * w + t * w + w * w + 2 * w * m);
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
}

ViTConfig ViTConfig::so400m() { return ViTConfig{}; }

ViTConfig ViTConfig::small() {
  ViTConfig c;
  c.name = "small";
  c.resize_size = 32;
  c.image_size = 28;
  c.width = 144;
  c.heads = 2;
  c.head_dim = 72;
  c.mlp = 288;
  c.layers = 2;
  c.max_layers = 2;
  return c;
}

ViTConfig ViTConfig::preset(const std::string& name) {
  if (name == "so400m") return so400m();
  if (name == "small") return small();
  throw Error("unknown model preset \"" + name + "\" (expected so400m or small)", kExitUsage);
}

}  // namespace tilevit::model
