#pragma once
// A Hugging Face checkpoint directory as a model: config.json, preprocessor_config.json and
// model.safetensors, or shards listed by model.safetensors.index.json. The vision tower is
// found inside a larger checkpoint (a full CLIP or SigLIP model, a classifier, a wrapper)
// by the prefix in front of its patch embedding. Every file read must resolve inside the
// directory (no "..", no absolute shard names, no symlink leading out). Errors are one line
// naming the file and the field, exit 3.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "formats/safetensors.hpp"
#include "model/config.hpp"
#include "model/tensor_source.hpp"

namespace tilevit::formats {

class HfCheckpoint : public model::TensorSource {
 public:
  static std::unique_ptr<HfCheckpoint> open(const std::string& directory);

  // The tower's config from config.json and preprocessor_config.json; CLIP's projection
  // is dropped when the checkpoint has none (CLIPVisionModel).
  const model::ViTConfig& config() const { return config_; }
  const std::string& prefix() const { return prefix_; }  // in front of the canonical names

  // Canonical names (model/checkpoint.hpp) are looked up under the found prefix.
  std::string describe() const override;
  std::optional<model::TensorInfo> info(const std::string& name) const override;
  void read_f32(const std::string& name, std::span<float> out) const override;

 private:
  HfCheckpoint() = default;
  const SafetensorsFile* shard_of(const std::string& name) const;

  std::string directory_;
  model::ViTConfig config_;
  std::string prefix_;
  std::vector<std::unique_ptr<SafetensorsFile>> shards_;
  std::map<std::string, std::size_t> shard_index_;  // full tensor name -> shards_ index
};

// Writes `config`'s random-model tensors (or any source holding checkpoint_tensors(config))
// as a checkpoint directory: config.json, preprocessor_config.json and model.safetensors,
// or `shards` > 1 files model-0000i-of-0000n.safetensors with model.safetensors.index.json.
void write_hf_checkpoint(const std::string& directory, const model::TensorSource& source,
                         const model::ViTConfig& config, const std::map<std::string, std::string>& metadata,
                         int shards = 1);

}  // namespace tilevit::formats
