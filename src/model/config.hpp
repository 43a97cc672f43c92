#pragma once
// Shape of a ViT vision tower (WORKLOAD.md, docs/MODEL.md): SigLIP So400m/14 (the main
// job) and the other families a Hugging Face checkpoint may hold (CLIP, DINOv2, google
// ViT), with presets of their exact dimensions and tiny ones for tests. The defaults are
// So400m/14; every field added for the other families defaults to SigLIP's behaviour.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace tilevit::model {

// Which Hugging Face model definition the tower follows (config.json `model_type`).
enum class Family { siglip, clip, dinov2, vit };
enum class Activation { gelu_tanh, gelu_erf, quick_gelu };
// What the tower returns per image:
//   map_head     SigLIP pooler_output: the MAP head over the final-LN tokens, [width]
//   class_token  the class token after the final LayerNorm (CLIP, DINOv2, ViT pooled
//                output; then CLIP's visual projection when projection_dim > 0)
//   tokens       last_hidden_state, [tokens][width] (final LN applied, except CLIP's,
//                whose post_layernorm only touches the pooled token)
//   hidden_state hidden_states[layers]: the encoder output of the last layer used, no
//                final LayerNorm (`--output-layer`, LLaVA's -2)
enum class Pooling { map_head, class_token, tokens, hidden_state };
// The interpolation of the learned position table when the image grid differs from it
// (torch.nn.functional.interpolate, mode "bicubic", align_corners False).
enum class PositionResize { none, bicubic, bicubic_antialias };

const char* family_name(Family family);          // "siglip", "clip", "dinov2", "vit"
const char* activation_name(Activation activation);  // HF hidden_act spelling
const char* pooling_name(Pooling pooling);

// preprocessor_config.json: resize (square, or shortest edge keeping the aspect ratio),
// crop (top-left, as SigLIP's image_size 378 inside 384, or centre), Pillow filter,
// rescale 1/255, then (x - mean) / std per channel.
struct Preprocessing {
  bool shortest_edge = false;  // false: resize to resize_size x resize_size
  bool center_crop = false;    // false: the top-left image_size square
  int crop_size = 0;           // side of the centre crop (0 = image_size); the model reads its top-left image_size
  int resample = 3;            // Pillow filter code: 2 bilinear, 3 bicubic
  std::array<float, 3> mean{0.5f, 0.5f, 0.5f};
  std::array<float, 3> std{0.5f, 0.5f, 0.5f};
};

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

  Family family = Family::siglip;
  Activation activation = Activation::gelu_tanh;
  bool class_token = false;   // a learned [CLS] token first (CLIP, DINOv2, ViT)
  int register_tokens = 0;    // DINOv2 with registers: after the class token, no position
  bool pre_layernorm = false; // CLIP's pre_layrnorm before the encoder
  bool layer_scale = false;   // DINOv2's per-channel LayerScale on both residual branches
  bool patch_bias = true;     // CLIP's patch convolution has no bias
  int position_grid = 0;      // side of the learned position table; 0 = grid()
  PositionResize position_resize = PositionResize::none;
  Pooling pooling = Pooling::map_head;
  int projection_dim = 0;     // CLIP visual_projection (no bias) after the pooled token; 0 = none
  Preprocessing preprocessing;

  int grid() const { return image_size / patch; }
  int patches() const { return grid() * grid(); }            // patch tokens per image
  int table_grid() const { return position_grid ? position_grid : grid(); }
  int position_rows() const { return table_grid() * table_grid() + (class_token ? 1 : 0); }
  int tokens() const { return patches() + (class_token ? 1 : 0) + register_tokens; }  // sequence length
  int patch_dim() const { return patch * patch * channels; }  // 588 for So400m/14
  int output_rows() const;    // per image: 1 when pooled, else tokens()
  int output_width() const;   // projection_dim when projected, else width
  // The output .npy shape: [batch, output_width] pooled, [batch, tokens, width] per token.
  std::vector<std::int64_t> output_shape() const;
  std::size_t output_values_per_image() const { return std::size_t(output_rows()) * output_width(); }
  std::int64_t parameter_count() const;                       // all max_layers layers
  double flops_per_image() const;                             // layers in use, 2 per MAC

  // Throws Error naming the field if the shape is inconsistent or out of range.
  void validate() const;

  static ViTConfig so400m();
  static ViTConfig small();  // 28x28 image, 2x2 patches, width 144, 2 heads of 72, MLP 288
  // A preset name (see preset_names()); throws Error for anything else.
  static ViTConfig preset(const std::string& name);
  static std::string preset_names();  // comma-separated, for help texts and errors
};

}  // namespace tilevit::model
