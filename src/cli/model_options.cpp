#include "cli/model_options.hpp"

#include <chrono>
#include <cstdio>
#include <iostream>

#include "formats/image.hpp"
#include "formats/safetensors.hpp"
#include "model/random_model.hpp"
#include "support/error.hpp"
#include "support/threads.hpp"

namespace tilevit::cli {

void ModelOptions::add_to(CLI::App& app, bool with_inputs) {
  app.add_option("--preset", preset, "model shape: so400m (SigLIP So400m/14) or small (tiny, for tests)")
      ->capture_default_str();
  app.add_option("--layers", layers, "encoder layers to use (1..27 for So400m)");
  app.add_option("--seed", seed, "seed of the random test model and images")->capture_default_str();
  app.add_option("--weights", weights, "Hugging Face safetensors checkpoint (vision_model.* tensors)");
  app.add_option("--fp8-scale", fp8_scale, "power-of-two scale S of every FP8 GEMM, in [-31, 31]")
      ->capture_default_str();
  app.add_flag("--calibrated-scales", calibrated_scales,
               "per-role FP8 scales for the real checkpoint (WORKLOAD.md) instead of --fp8-scale");
  app.add_option("--threads", threads, "host threads (0 = all cores); results do not depend on it")
      ->capture_default_str();
  if (with_inputs) {
    app.add_option("--batch", batch, "images per call (1..64)")->capture_default_str();
    app.add_option("--image", images,
                   "input image (PNG, JPEG, or preprocessed .npy/.f32 [3,S,S]); repeat per batch entry; "
                   "default: the random model's images");
  }
}

model::ViTConfig ModelOptions::config() const {
  model::ViTConfig c = model::ViTConfig::preset(preset);
  if (layers) c.layers = *layers;
  if (!images.empty()) {
    if (batch != 1 && batch != static_cast<int>(images.size()))
      throw Error("--batch " + std::to_string(batch) + " does not match the " + std::to_string(images.size()) +
                      " --image files given",
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

model::ViTWeights ModelOptions::load_weights(const model::ViTConfig& config) const {
  if (weights.empty()) return model::load_weights(model::RandomModelSource(config, seed), config);
  const auto file = formats::SafetensorsFile::open(weights);
  return model::load_weights(*file, config);
}

std::vector<std::vector<float>> ModelOptions::load_images(const model::ViTConfig& config) const {
  std::vector<std::vector<float>> batch_images;
  for (int b = 0; b < config.batch; ++b)
    batch_images.push_back(images.empty() ? model::random_image(config, seed, b)
                                          : formats::load_image_input(images[b], config.resize_size, config.image_size));
  return batch_images;
}

void ModelOptions::apply_threads() const {
  if (threads < 0) throw Error("--threads must be >= 0", kExitUsage);
  set_host_threads(threads);
}

void progress(const std::string& message) {
  static const auto start = std::chrono::steady_clock::now();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "[%7.2fs] %s\n", s, message.c_str());
}

}  // namespace tilevit::cli
