#pragma once
// The deterministic random test model (WORKLOAD.md, "The seed's random test model"):
// every value is a standard normal drawn from SplitMix64 seeded per element, then
// scaled by its role. Layer i is the same whatever the layer count, so an N-layer
// model is the first N layers of the 27-layer one.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/checkpoint.hpp"
#include "model/config.hpp"
#include "model/tensor_source.hpp"

namespace tilevit::model {

// The standard normal for element `index` of a stream: SplitMix64 seeded with
// (stream_seed XOR index), two draws, Box-Muller (cosine branch), in float.
float seeded_normal(std::uint64_t stream_seed, std::uint64_t index);
// Stream seed of a named tensor: SplitMix64 of (seed XOR FNV-1a-64(name)).
std::uint64_t tensor_stream_seed(std::uint64_t seed, const std::string& name);

class RandomModelSource : public TensorSource {
 public:
  RandomModelSource(const ViTConfig& config, std::uint64_t seed);
  std::string describe() const override;
  std::optional<TensorInfo> info(const std::string& name) const override;
  void read_f32(const std::string& name, std::span<float> out) const override;
  const std::vector<CheckpointTensor>& tensors() const { return tensors_; }

 private:
  std::uint64_t seed_;
  std::vector<CheckpointTensor> tensors_;
  std::map<std::string, std::size_t> index_;
};

// The default input image b of a batch: CHW [3, S, S] normalised pixels, N(0,1) x 0.5,
// stream "image.<b>".
std::vector<float> random_image(const ViTConfig& config, std::uint64_t seed, int b);

}  // namespace tilevit::model
