#pragma once
// The Hugging Face SiglipVisionModel tensor names and shapes (WORKLOAD.md) for a config:
// the contract shared by the random model, the safetensors loader and export-weights.
#include <cstdint>
#include <string>
#include <vector>

#include "model/config.hpp"

namespace tilevit::model {

inline constexpr const char* kVisionPrefix = "vision_model.";

enum class InitKind { GemmWeight, Bias, LayerNormScale, PositionEmbedding, Probe };

struct CheckpointTensor {
  std::string name;                 // full name, with the vision_model. prefix
  std::vector<std::int64_t> shape;
  InitKind init;
  int fan_in = 0, fan_out = 0;      // for GemmWeight: the Xavier factor's fans
};

// Every tensor of the vision tower for `config.layers` layers, in a fixed order.
std::vector<CheckpointTensor> checkpoint_tensors(const ViTConfig& config);

}  // namespace tilevit::model
