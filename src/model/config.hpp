#pragma once
// Shape of a SigLIP-style ViT vision tower (WORKLOAD.md). The So400m/14 defaults and a
// tiny preset with the same structure (including the MAP head) for tests.
#include <cstdint>
#include <string>

namespace tilevit::model {

struct ViTConfig {
  std::string name = "so400m-patch14-384";
  int resize_size = 384;  // preprocessing resizes to this square (bicubic) ...
  int image_size = 378;   // ... and the device reads its top-left image_size square
  int patch = 14;
  int channels = 3;
  int width = 1152;
  int heads = 16;
  int head_dim = 72;
  int mlp = 4304;
  int layers = 27;
  int max_layers = 27;    // layers held by the checkpoint; `layers` uses the first ones
  int batch = 1;
  float layer_norm_eps = 1e-6f;

  int grid() const { return image_size / patch; }
  int patches() const { return grid() * grid(); }            // tokens per image
  int patch_dim() const { return patch * patch * channels; }  // 588 for So400m/14
  std::int64_t parameter_count() const;                       // all max_layers layers
  double flops_per_image() const;                             // layers in use, 2 per MAC

  // Throws Error naming the field if the shape is inconsistent or out of range.
  void validate() const;

  static ViTConfig so400m();
  static ViTConfig small();  // 28x28 image, 2x2 patches, width 144, 2 heads of 72, MLP 288
  // "so400m" or "small"; throws Error for anything else.
  static ViTConfig preset(const std::string& name);
};

}  // namespace tilevit::model
