#pragma once
// Hugging Face checkpoint metadata: config.json (the vision tower's shape, found at the
// top level or under "vision_config" of a full CLIP/SigLIP model), preprocessor_config.json
// (resize, crop, filter, mean/std) and model.safetensors.index.json (tensor -> shard),
// parsed from text with every size bounded before anything is allocated; and the same
// files written for export-weights. Errors name the file and the field, exit 3.
#include <map>
#include <string>

#include "model/config.hpp"

namespace tilevit::formats {

inline constexpr std::size_t kMaxConfigBytes = 1 << 20;        // config.json, preprocessor_config.json
inline constexpr std::size_t kMaxIndexBytes = 64u << 20;       // model.safetensors.index.json
inline constexpr std::size_t kMaxShards = 4096;

// config.json -> the tower's config (all its layers, batch 1). `file` names it in errors.
model::ViTConfig parse_hf_config(const std::string& text, const std::string& file);
// preprocessor_config.json applied to a parsed config: resize_size, image_size (the crop,
// rounded down to whole patches) and the preprocessing fields.
void apply_preprocessor_config(const std::string& text, const std::string& file, model::ViTConfig& config);
// model.safetensors.index.json -> weight_map (tensor name -> shard file name as written).
std::map<std::string, std::string> parse_safetensors_index(const std::string& text, const std::string& file);

// The files a Hugging Face loader reads for `config` (its model class's config and image
// processor), as pretty-printed JSON.
std::string hf_config_json(const model::ViTConfig& config);
std::string hf_preprocessor_json(const model::ViTConfig& config);

}  // namespace tilevit::formats
