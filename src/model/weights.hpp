#pragma once
// The model's parameters in FP32, in the layouts the references compute with.
// Linear weights keep the checkpoint's [out][in] order; the patch embedding is
// flattened to [width][patch_dim] with pixels in (y, x, channel) order, the order of the
// device's patch rows (WORKLOAD.md).
#include <vector>

#include "model/config.hpp"
#include "model/tensor_source.hpp"

namespace tilevit::model {

struct Linear {
  int in = 0, out = 0;
  std::vector<float> weight;  // [out][in]
  std::vector<float> bias;    // [out]
};

struct LayerNormParams {
  std::vector<float> scale, bias;  // [width]
};

struct EncoderLayerWeights {
  LayerNormParams ln1, ln2;
  Linear qkv;  // fused [3*width][width], rows q, k, v
  Linear out;
  Linear fc1, fc2;
  std::vector<float> ls1, ls2;  // LayerScale [width] of the two branches; empty without it
};

struct MapHeadWeights {
  std::vector<float> probe;  // [width]
  Linear q;                  // [width][width]
  Linear kv;                 // fused [2*width][width], rows k, v
  Linear out;
  LayerNormParams ln;
  Linear fc1, fc2;
};

struct ViTWeights {
  ViTConfig config;
  Linear patch_embedding;        // [width][patch_dim], (y, x, c) order; zero bias if the family has none
  std::vector<float> class_token;  // [width], or empty
  std::vector<float> registers;    // [register_tokens][width] (no position), or empty
  // [class token? + patches][width], already resized to the image's patch grid
  // (SigLIP: [patches][width], the table as stored).
  std::vector<float> position;
  LayerNormParams pre_ln;        // empty unless config.pre_layernorm
  std::vector<EncoderLayerWeights> layers;
  LayerNormParams post_ln;
  MapHeadWeights head;           // SigLIP only
  Linear projection;             // CLIP visual projection [projection_dim][width], no bias; or empty
};

// The part of the model a process needs (a pipeline rank runs some stages): the encoder
// layers [first_layer, end_layer), the embedding when `embeds`, the final LayerNorm, head
// and projection when `pools`. The default is the whole model.
struct WeightPart {
  int first_layer = 0, end_layer = -1;  // -1: to the last layer
  bool embeds = true, pools = true;
};

// Pulls every tensor of `config` (of `part`) from `source`: a missing tensor, a wrong
// shape or a non-finite value is an Error naming the source and the tensor. Extra tensors
// are ignored. Layers outside the part are left empty; `layers` keeps one entry per layer
// of the config, so layer i is layers[i] either way.
ViTWeights load_weights(const TensorSource& source, const ViTConfig& config, const WeightPart& part = {});

}  // namespace tilevit::model
