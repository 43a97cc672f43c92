#pragma once
// The `features` object of a package's model section: every ViTConfig field the other
// families add (docs/MODEL.md), so `run` rebuilds the tower, its output and its image
// preprocessing from the package alone. Absent when every field has SigLIP's default, so
// SigLIP packages keep the bytes they had before the families existed.
#include <nlohmann/json.hpp>

#include "model/config.hpp"

namespace tilevit::package {

// null for the SigLIP defaults.
nlohmann::json family_features_json(const model::ViTConfig& config);
// Reads `features` into config; throws Error naming the field on anything malformed.
void read_family_features(const nlohmann::json& features, model::ViTConfig& config);

}  // namespace tilevit::package
