#pragma once
// Flags shared by every command that builds a model: preset, layers, batch, weights,
// images, FP8 scales, threads; and turning them into config, weights and inputs.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "job/capacity.hpp"
#include "model/config.hpp"
#include "model/numerics_config.hpp"
#include "model/weights.hpp"

namespace tilevit::formats {
class HfCheckpoint;
}

namespace tilevit::cli {

struct ModelOptions {
  std::string preset = "so400m";
  std::optional<int> layers;
  int batch = 1;
  std::uint64_t seed = 0;
  std::string weights;               // safetensors file; empty = the random test model
  std::string model_dir;             // Hugging Face checkpoint directory (config + weights)
  std::optional<int> output_layer;   // hidden_states[K] (negative: from the end) instead of pooling
  std::vector<std::string> images;   // one per batch entry; empty = random images
  int fp8_scale = -4;
  bool calibrated_scales = false;
  int threads = 0;

  void add_to(CLI::App& app, bool with_inputs = true);
  // Whether `flag` (e.g. "--layers") was given on the command line.
  bool given(const std::string& flag) const { return app_ != nullptr && app_->count(flag) > 0; }
  // Validated. With --weights, the layer count is the checkpoint's own unless --layers
  // asks for fewer (more is an error, found before any work).
  model::ViTConfig config() const;
  model::NumericsConfig numerics() const;      // validated
  // The whole model, or `part` of it (a pipeline rank's stages).
  model::ViTWeights load_weights(const model::ViTConfig& config, const model::WeightPart& part = {}) const;
  std::vector<std::vector<float>> load_images(const model::ViTConfig& config) const;  // config.batch of them
  // `count` images (a pipeline call of several micro-batches takes batch x micro-batches):
  // the --image files, whose number must be `count` (else Error(kExitUsage)), or random.
  std::vector<std::vector<float>> load_images(const model::ViTConfig& config, std::size_t count) const;
  void apply_threads() const;

 private:
  CLI::App* app_ = nullptr;
  const formats::HfCheckpoint& checkpoint() const;  // opened once
  mutable std::shared_ptr<formats::HfCheckpoint> checkpoint_;
};

// Encoder layers a checkpoint holds: vision_model.encoder.layers.<i>.* for i < the result.
int checkpoint_layers(const std::string& weights_path);

// At most 4 threads per hardware thread: more only adds contention, and far more makes
// the OpenMP runtime fail to create them.
int max_host_threads();

using job::layers_text;  // "1 layer", "27 layers"

// Progress lines for steps that take more than a moment (stderr, never stdout).
void progress(const std::string& message);
// No more progress lines: `compile --json` with an output on standard output, whose JSON
// report is then stderr's only line.
void silence_progress();

extern const char* const kBatchHelp;  // --batch: the model's range and the machine's real limit

}  // namespace tilevit::cli
