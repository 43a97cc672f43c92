#pragma once
// Flags shared by every command that builds a model: preset, layers, batch, weights,
// images, FP8 scales, threads; and turning them into config, weights and inputs.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/config.hpp"
#include "model/numerics_config.hpp"
#include "model/weights.hpp"

namespace tilevit::cli {

struct ModelOptions {
  std::string preset = "so400m";
  std::optional<int> layers;
  int batch = 1;
  std::uint64_t seed = 0;
  std::string weights;               // safetensors file; empty = the random test model
  std::vector<std::string> images;   // one per batch entry; empty = random images
  int fp8_scale = -4;
  bool calibrated_scales = false;
  int threads = 0;

  void add_to(CLI::App& app, bool with_inputs = true);
  model::ViTConfig config() const;             // validated
  model::NumericsConfig numerics() const;      // validated
  model::ViTWeights load_weights(const model::ViTConfig& config) const;
  std::vector<std::vector<float>> load_images(const model::ViTConfig& config) const;
  void apply_threads() const;
};

// Progress lines for steps that take more than a moment (stderr, never stdout).
void progress(const std::string& message);

}  // namespace tilevit::cli
