#pragma once
// The Hugging Face tensor names and shapes of each family's vision tower (SiglipVisionModel,
// CLIPVisionModelWithProjection, Dinov2Model / Dinov2WithRegistersModel, ViTModel) for a
// config: the contract shared by the random model, the loader and export-weights. Each
// tensor also has a family-independent key ("layer.3.q.weight") by which the loader asks
// for it, so one loader serves every family.
#include <cstdint>
#include <string>
#include <vector>

#include "model/config.hpp"

namespace tilevit::model {

inline constexpr const char* kVisionPrefix = "vision_model.";

// How the random test model draws a tensor. SigLIP keeps the seed's draws (unit LayerNorm
// scales, 1e-6 biases); the other families use visible biases and scales, so that a
// tensor mapped to the wrong place changes the output well beyond the tests' tolerances.
enum class InitKind { GemmWeight, Bias, LayerNormScale, PositionEmbedding, Probe, VisibleBias, VisibleScale };

struct CheckpointTensor {
  std::string name;                 // full Hugging Face name, canonical prefix included
  std::string key;                  // family-independent key, e.g. "layer.0.q.weight"
  std::vector<std::int64_t> shape;
  InitKind init;
  int fan_in = 0, fan_out = 0;      // for GemmWeight: the Xavier factor's fans
};

// Every tensor of the vision tower for `config.layers` layers, in a fixed order, named
// as the family's model class saves them (CLIP and SigLIP under "vision_model.").
std::vector<CheckpointTensor> checkpoint_tensors(const ViTConfig& config);

// The tensor the loader looks for to find where the tower sits inside a checkpoint
// (its canonical name; a full CLIP/SigLIP model or a classifier adds a prefix).
std::string anchor_tensor(const ViTConfig& config);

class TensorSource;
// The presets whose every tensor, with `layers` encoder layers (at most the preset's own),
// `source` holds at that preset's shape: the hint when a checkpoint does not fit the
// preset asked ("--preset small"). Defined with the loader (weights.cpp).
std::vector<std::string> presets_matching(const TensorSource& source, int layers);

}  // namespace tilevit::model
