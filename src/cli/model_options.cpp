#include "cli/model_options.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <thread>

#include "cli/validators.hpp"

#include "formats/hf_checkpoint.hpp"
#include "formats/image.hpp"
#include "formats/safetensors.hpp"
#include "model/checkpoint.hpp"
#include "model/random_model.hpp"
#include "support/error.hpp"
#include "support/threads.hpp"

namespace tilevit::cli {

// The model takes 1..64 images per call; the machine's SRAM fits fewer (measured with
// `tilevit compile --batch B` on the embedded C600 at 27 layers: 2 fits, 3 does not).
const char* const kBatchHelp =
    "images per call: 1..64 for the model, but the tiles' SRAM limits it (So400m, 27 layers on the C600: at most 3); "
    "compile says when a batch does not fit";

void ModelOptions::add_to(CLI::App& app, bool with_inputs) {
  app_ = &app;
  auto* preset_option = app.add_option("--preset", preset,
                                       "model shape: so400m (SigLIP So400m/14), small (tiny, for tests), or one of " +
                                           model::ViTConfig::preset_names())
                            ->capture_default_str();
  auto* model_option = app.add_option("--model", model_dir,
                                      "Hugging Face checkpoint directory (config.json, preprocessor_config.json, "
                                      "model.safetensors or shards): SigLIP, CLIP, DINOv2, ViT");
  model_option->excludes(preset_option);
  auto* layers_option = app.add_option(
      "--layers", layers, "encoder layers to use (1..27 for So400m; with --weights: default the checkpoint's count)");
  app.add_option("--output-layer", output_layer,
                 "return hidden_states[K] (all tokens, no final LayerNorm) instead of the pooled output; "
                 "negative K counts from the end (LLaVA: -2)")
      ->excludes(layers_option);
  app.add_option("--seed", seed, "seed of the random test model and images")->check(unsigned_64())->capture_default_str();
  app.add_option("--weights", weights, "Hugging Face safetensors checkpoint (vision_model.* tensors)")
      ->excludes(model_option);
  CLI::Option* scale = app.add_option("--fp8-scale", fp8_scale, "power-of-two scale S of every FP8 GEMM, in [-31, 31]")
                           ->check(CLI::Range(-31, 31))
                           ->capture_default_str();
  app.add_flag("--calibrated-scales", calibrated_scales,
               "per-role FP8 scales for the real checkpoint (docs/NUMERICS.md, \"Operations, in order\") instead of --fp8-scale")
      ->excludes(scale);
  app.add_option("--threads", threads, "host threads (0 = all cores, at most 4 per core); results do not depend on it")
      ->check(CLI::Range(0, max_host_threads()))
      ->capture_default_str();
  if (with_inputs) {
    app.add_option("--batch", batch, kBatchHelp)->capture_default_str();
    app.add_option("--image", images,
                   "input image (PNG, JPEG, or preprocessed .npy/.f32 [3,S,S]); repeat per batch entry; "
                   "default: the random model's images");
  }
}

int checkpoint_layers(const std::string& weights_path) {
  const auto file = formats::SafetensorsFile::open(weights_path);
  const std::string prefix = std::string(model::kVisionPrefix) + "encoder.layers.";
  int count = 0;
  for (const std::string& name : file->names()) {
    if (name.rfind(prefix, 0) != 0) continue;
    int index = 0;
    const char* digits = name.c_str() + prefix.size();
    const auto [end, ec] = std::from_chars(digits, name.c_str() + name.size(), index);
    if (ec == std::errc() && *end == '.' && index < 1 << 20) count = std::max(count, index + 1);
  }
  return count;
}

int max_host_threads() { return 4 * static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

const formats::HfCheckpoint& ModelOptions::checkpoint() const {
  if (!checkpoint_) checkpoint_ = formats::HfCheckpoint::open(model_dir);
  return *checkpoint_;
}

model::ViTConfig ModelOptions::config() const {
  model::ViTConfig c = model_dir.empty() ? model::ViTConfig::preset(preset) : checkpoint().config();
  if (layers) c.layers = *layers;
  if (!weights.empty()) {
    const int held = checkpoint_layers(weights);
    if (!layers) c.layers = std::min(held, c.max_layers);
    if (held < c.layers)
      throw Error(weights + ": the checkpoint holds " + std::to_string(held) + " encoder layer" + (held == 1 ? "" : "s") +
                  ", " + std::to_string(c.layers) + " asked (--layers)");
  }
  if (output_layer) {  // hidden_states[0] is the embedding output, [L] the last layer's
    const int k = *output_layer, resolved = k < 0 ? c.max_layers + 1 + k : k;
    if (k == 0 || resolved < 1 || resolved > c.max_layers)
      throw Error("--output-layer " + std::to_string(k) + ": must be in [1, " + std::to_string(c.max_layers) +
                      "] or [-" + std::to_string(c.max_layers) + ", -1] for " + c.name,
                  kExitUsage);
    c.layers = resolved;
    c.pooling = model::Pooling::hidden_state;
  }
  if (!images.empty()) {
    if (given("--batch") && batch != static_cast<int>(images.size()))
      throw Error("--batch " + std::to_string(batch) + " does not match the " + std::to_string(images.size()) +
                      " --image files given (a call of batch B takes B images; drop --batch to take the count)",
                  kExitUsage);
    c.batch = static_cast<int>(images.size());
  } else {
    c.batch = batch;
  }
  c.validate();
  return c;
}

model::NumericsConfig ModelOptions::numerics() const {
  return calibrated_scales ? model::NumericsConfig::calibrated() : model::NumericsConfig::uniform(fp8_scale);
}

model::ViTWeights ModelOptions::load_weights(const model::ViTConfig& config, const model::WeightPart& part) const {
  if (!model_dir.empty()) {
    // `run --package` takes its shape from the package: a checkpoint of another family is
    // refused by name rather than searched for the package's tensor names.
    const model::Family held = checkpoint().config().family;
    if (held != config.family)
      throw Error(model_dir + ": model " + checkpoint().config().name + " is a " + model::family_name(held) +
                  " tower; the package was compiled for " + model::family_name(config.family), kExitBadInput);
    return model::load_weights(checkpoint(), config, part);
  }
  if (weights.empty()) return model::load_weights(model::RandomModelSource(config, seed), config, part);
  const auto file = formats::SafetensorsFile::open(weights);
  try {
    return model::load_weights(*file, config, part);
  } catch (const Error& e) {  // a checkpoint of another shape: name the preset it fits
    const std::string message = e.what();
    if (message.find(" has shape ") == std::string::npos && message.find(": missing tensor ") == std::string::npos) throw;
    const auto presets = model::presets_matching(*file, config.layers);
    if (presets.empty() || std::find(presets.begin(), presets.end(), preset) != presets.end()) throw;
    std::string names;
    for (const std::string& p : presets) names += (names.empty() ? "--preset " : " or --preset ") + p;
    throw Error(message + " (" + config.name + "; the checkpoint's shapes are those of " + names + ")", e.exit_code());
  }
}

std::vector<std::vector<float>> ModelOptions::load_images(const model::ViTConfig& config) const {
  return load_images(config, std::size_t(config.batch));
}

std::vector<std::vector<float>> ModelOptions::load_images(const model::ViTConfig& config, std::size_t count) const {
  if (!images.empty() && images.size() != count)
    throw Error("a call takes " + std::to_string(count) + " images; " + std::to_string(images.size()) + " --image given",
                kExitUsage);
  std::vector<std::vector<float>> call_images;
  for (std::size_t b = 0; b < count; ++b)
    call_images.push_back(images.empty() ? model::random_image(config, seed, int(b))
                                         : formats::load_image_input(images[b], config));
  return call_images;
}

void ModelOptions::apply_threads() const {
  if (threads < 0 || threads > max_host_threads())
    throw Error("--threads " + std::to_string(threads) + ": expected 0..." + std::to_string(max_host_threads()) +
                    " (0 = all cores, at most 4 per core)",
                kExitUsage);
  set_host_threads(threads);
}

namespace {
bool progress_off = false;
}

void silence_progress() { progress_off = true; }

void progress(const std::string& message) {
  static const auto start = std::chrono::steady_clock::now();
  if (progress_off) return;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "[%7.2fs] %s\n", s, message.c_str());
}

}  // namespace tilevit::cli
