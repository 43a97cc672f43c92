// Presets: the exact dimensions of each family member Hugging Face publishes (so the
// random test model has the real shapes) and tiny ones of every family for tests.
#include <functional>
#include <map>

#include "model/config.hpp"
#include "support/error.hpp"

namespace tilevit::model {
namespace {

constexpr std::array<float, 3> kClipMean{0.48145466f, 0.4578275f, 0.40821073f};
constexpr std::array<float, 3> kClipStd{0.26862954f, 0.26130258f, 0.27577711f};
constexpr std::array<float, 3> kImageNetMean{0.485f, 0.456f, 0.406f};
constexpr std::array<float, 3> kImageNetStd{0.229f, 0.224f, 0.225f};

void shape(ViTConfig& c, int width, int heads, int mlp, int layers) {
  c.width = width;
  c.heads = heads;
  c.head_dim = width / heads;
  c.mlp = mlp;
  c.layers = c.max_layers = layers;
}

// A square-resized member of `family` (SigLIP's preprocessing until the caller changes it).
ViTConfig member(Family family, const std::string& name, int patch, int image, int width, int heads, int mlp,
                 int layers) {
  ViTConfig c;
  c.name = name;
  c.family = family;
  c.patch = patch;
  c.resize_size = c.image_size = image;
  shape(c, width, heads, mlp, layers);
  return c;
}

// SigLIP B/16 and L/16: square bicubic resize, mean = std = 0.5.
ViTConfig siglip(const std::string& name, int image, int width, int heads, int mlp, int layers) {
  return member(Family::siglip, name, 16, image, width, heads, mlp, layers);
}

// openai/clip-vit-*: quick_gelu, pre_layrnorm, eps 1e-5, no patch bias, projection;
// CLIPImageProcessor: shortest edge, centre crop, bicubic, CLIP mean/std.
ViTConfig clip(const std::string& name, int patch, int image, int width, int heads, int mlp, int layers, int proj) {
  ViTConfig c = member(Family::clip, name, patch, image, width, heads, mlp, layers);
  c.layer_norm_eps = 1e-5f;
  c.activation = Activation::quick_gelu;
  c.class_token = c.pre_layernorm = true;
  c.patch_bias = false;
  c.pooling = Pooling::class_token;
  c.projection_dim = proj;
  c.preprocessing = {true, true, 0, 3, kClipMean, kClipStd};
  return c;
}

// facebook/dinov2-*: the 37x37 table of 518 px, images of 224 (resize 256, crop 224),
// exact GELU, LayerScale, eps 1e-6; the with-registers models add 4 registers and
// interpolate with antialiasing.
ViTConfig dinov2(const std::string& name, int width, int heads, int layers, int registers) {
  ViTConfig c;
  c.name = name;
  c.family = Family::dinov2;
  c.resize_size = 256;
  c.image_size = 224;
  shape(c, width, heads, 4 * width, layers);
  c.activation = Activation::gelu_erf;
  c.class_token = c.layer_scale = true;
  c.register_tokens = registers;
  c.position_grid = 37;
  c.position_resize = registers ? PositionResize::bicubic_antialias : PositionResize::bicubic;
  c.pooling = Pooling::class_token;
  c.preprocessing = {true, true, 0, 3, kImageNetMean, kImageNetStd};
  return c;
}

// google/vit-base-patch16-224: exact GELU, eps 1e-12, square bilinear resize, 0.5/0.5.
ViTConfig vit(const std::string& name, int patch, int image, int width, int heads, int mlp, int layers) {
  ViTConfig c = member(Family::vit, name, patch, image, width, heads, mlp, layers);
  c.layer_norm_eps = 1e-12f;
  c.activation = Activation::gelu_erf;
  c.class_token = true;
  c.pooling = Pooling::class_token;
  c.preprocessing.resample = 2;
  return c;
}

// Tiny members for tests: 2 layers, patch 4, head dims 64, 80 and 96 (the real ones'),
// images of 12 or 16 px; CLIP's shortest-edge resize and crop differ (14 -> 12), the
// DINOv2 tables are 4x4 for a 3x3 grid (interpolated).
ViTConfig tiny(ViTConfig c, const std::string& name, int image, int width, int heads, int mlp) {
  c.name = name;
  c.patch = 4;
  c.image_size = image;
  c.resize_size = c.preprocessing.shortest_edge ? image + 2 : image;
  shape(c, width, heads, mlp, 2);
  if (c.projection_dim) c.projection_dim = 96;
  if (c.position_grid) c.position_grid = 4;
  if (c.register_tokens) c.register_tokens = 2;
  return c;
}

const std::map<std::string, std::function<ViTConfig()>>& presets() {
  static const std::map<std::string, std::function<ViTConfig()>> table = {
      {"so400m", [] { return ViTConfig{}; }},
      {"small", [] { return ViTConfig::small(); }},
      {"siglip-b16-224", [] { return siglip("siglip-base-patch16-224", 224, 768, 12, 3072, 12); }},
      {"siglip-b16-384", [] { return siglip("siglip-base-patch16-384", 384, 768, 12, 3072, 12); }},
      {"siglip-l16-384", [] { return siglip("siglip-large-patch16-384", 384, 1024, 16, 4096, 24); }},
      // google/siglip2-giant-opt-patch16-384: SigLIP's tower and tensor names (Siglip2's
      // fixed-resolution checkpoints keep them); 16 heads of 96. Too big for one C600.
      {"siglip2-g-opt16-384", [] { return siglip("siglip2-giant-opt-patch16-384", 384, 1536, 16, 6144, 40); }},
      {"clip-b32", [] { return clip("clip-vit-base-patch32", 32, 224, 768, 12, 3072, 12, 512); }},
      {"clip-b16", [] { return clip("clip-vit-base-patch16", 16, 224, 768, 12, 3072, 12, 512); }},
      {"clip-l14", [] { return clip("clip-vit-large-patch14", 14, 224, 1024, 16, 4096, 24, 768); }},
      {"clip-l14-336", [] { return clip("clip-vit-large-patch14-336", 14, 336, 1024, 16, 4096, 24, 768); }},
      {"dinov2-s", [] { return dinov2("dinov2-small", 384, 6, 12, 0); }},
      {"dinov2-b", [] { return dinov2("dinov2-base", 768, 12, 12, 0); }},
      {"dinov2-l", [] { return dinov2("dinov2-large", 1024, 16, 24, 0); }},
      {"dinov2-s-reg", [] { return dinov2("dinov2-with-registers-small", 384, 6, 12, 4); }},
      {"dinov2-b-reg", [] { return dinov2("dinov2-with-registers-base", 768, 12, 12, 4); }},
      {"dinov2-l-reg", [] { return dinov2("dinov2-with-registers-large", 1024, 16, 24, 4); }},
      {"vit-b16", [] { return vit("vit-base-patch16-224", 16, 224, 768, 12, 3072, 12); }},
      {"clip-tiny", [] { return tiny(clip("", 32, 224, 768, 12, 3072, 12, 512), "clip-tiny", 12, 128, 2, 256); }},
      {"dinov2-tiny", [] { return tiny(dinov2("", 384, 6, 12, 0), "dinov2-tiny", 12, 160, 2, 320); }},
      {"dinov2-reg-tiny", [] { return tiny(dinov2("", 384, 6, 12, 4), "dinov2-reg-tiny", 12, 160, 2, 320); }},
      {"vit-tiny", [] { return tiny(vit("", 16, 224, 768, 12, 3072, 12), "vit-tiny", 16, 128, 2, 256); }},
      // SigLIP2 g-opt's head dim 96, 4 layers: the multi-chip tests pipeline it.
      {"siglip2-tiny", [] {
         ViTConfig c = tiny(siglip("", 384, 1536, 16, 6144, 40), "siglip2-tiny", 16, 192, 2, 384);
         c.layers = c.max_layers = 4;
         return c;
       }},
  };
  return table;
}

}  // namespace

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

std::string ViTConfig::preset_names() {
  std::string names;
  for (const auto& [name, make] : presets()) names += (names.empty() ? "" : ", ") + name;
  return names;
}

ViTConfig ViTConfig::preset(const std::string& name) {
  if (name == "dinov2-g" || name == "dinov2-g-reg")
    throw Error("model preset \"" + name + "\": DINOv2-g needs a SwiGLU MLP and two chips, not supported yet",
                kExitUsage);
  const auto it = presets().find(name);
  if (it == presets().end())
    throw Error("unknown model preset \"" + name + "\" (expected one of " + preset_names() + ")", kExitUsage);
  return it->second();
}

}  // namespace tilevit::model
