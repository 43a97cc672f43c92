#pragma once
// Host references of the whole vision tower.
//  * forward_fp32: plain FP32 on the unquantised weights, the yardstick (oneDNN sgemm).
//  * DeviceNumericsModel::forward: the same graph with the device's rounding at every
//    step (docs/NUMERICS.md), through the kernels the device model uses.
// Both take a batch of CHW [3][S][S] normalised images and return [batch][width].
#include <vector>

#include "model/numerics_config.hpp"
#include "model/weights.hpp"

namespace tilevit::reference {

using ImageBatch = std::vector<std::vector<float>>;

std::vector<float> forward_fp32(const model::ViTWeights& weights, const ImageBatch& images);

// Weights quantised once for the device numerics (FP8 codes' values or FP16 values,
// transposed to [in][out] for the kernels); reusable across calls.
struct DeviceWeights;
class DeviceNumericsModel {
 public:
  DeviceNumericsModel(const model::ViTWeights& weights, const model::NumericsConfig& numerics);
  // Encoder layer i split as layer_numerics[i] says (its GEMMs' K blocks, attention key
  // block, LayerNorm parts, FP8 attention: a pipeline's stages may split their layers'
  // sums differently), the embedding and head as `numerics`. Throws Error(kExitInternal)
  // unless there is one per layer.
  DeviceNumericsModel(const model::ViTWeights& weights, const model::NumericsConfig& numerics,
                      std::vector<model::NumericsConfig> layer_numerics);
  ~DeviceNumericsModel();
  DeviceNumericsModel(const DeviceNumericsModel&) = delete;
  DeviceNumericsModel& operator=(const DeviceNumericsModel&) = delete;
  std::vector<float> forward(const ImageBatch& images) const;

 private:
  const model::ViTConfig config_;
  const model::NumericsConfig numerics_;
  const std::vector<model::NumericsConfig> layer_numerics_;  // per encoder layer
  DeviceWeights* weights_;
};

}  // namespace tilevit::reference
