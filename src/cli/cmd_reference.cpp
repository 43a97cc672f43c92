// tilevit reference: the FP32 yardstick and the device-numerics reference on the same
// weights and images, compared by cosine.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/model_options.hpp"
#include "formats/npy.hpp"
#include "reference/compare.hpp"
#include "reference/forward.hpp"
#include "support/error.hpp"
#include "support/threads.hpp"

namespace tilevit::cli {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

template <typename F>
double median_seconds(int repeat, F&& body) {
  std::vector<double> times;
  for (int i = 0; i < repeat; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    body();
    times.push_back(seconds_since(t0));
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

struct ReferenceCommand {
  ModelOptions model;
  std::string save_fp32, save_device;
  bool json = false, fp32_only = false;
  int repeat = 1;
  double threshold = 0.99;

  CommandAction setup(CLI::App& app) {
    model.add_to(app);
    app.add_option("--save-fp32", save_fp32, "write the FP32 embeddings as .npy [batch, width]");
    app.add_option("--save-device", save_device, "write the device-numerics embeddings as .npy [batch, width]");
    app.add_flag("--fp32-only", fp32_only, "run only the FP32 reference (for timing)");
    app.add_option("--repeat", repeat, "run each forward pass N times and report the median time")
        ->check(CLI::Range(1, 100))
        ->capture_default_str();
    app.add_option("--min-cosine", threshold, "pass threshold for every embedding's cosine")->capture_default_str();
    app.add_flag("--json", json, "print one JSON object instead of text");
    return [this] { return run(); };
  }

  int run() {
    model.apply_threads();
    const model::ViTConfig config = model.config();
    const model::NumericsConfig numerics = model.numerics();
    if (const std::string feature = config.feature_not_compiled(); !feature.empty() && !fp32_only) {
      progress("FP32 reference only: the device numerics do not implement " + feature + " yet");
      fp32_only = true;
    }
    // Pooled: [batch, width]; per-token outputs: [batch, tokens, width].
    const std::vector<std::int64_t> out_shape =
        config.output_rows() == 1
            ? std::vector<std::int64_t>{config.batch, config.output_width()}
            : std::vector<std::int64_t>{config.batch, config.output_rows(), config.output_width()};
    auto t0 = std::chrono::steady_clock::now();
    progress("loading weights (" + config.name + ", " + std::to_string(config.layers) + " layers)");
    const model::ViTWeights weights = model.load_weights(config);
    const auto images = model.load_images(config);
    const double load_seconds = seconds_since(t0);

    progress("FP32 reference");
    std::vector<float> fp32;
    const double fp32_seconds = median_seconds(repeat, [&] { fp32 = reference::forward_fp32(weights, images); });
    if (!save_fp32.empty()) formats::write_npy(save_fp32, out_shape, fp32);

    nlohmann::json out;
    out["model"] = config.name;
    out["family"] = model::family_name(config.family);
    out["output"] = model::pooling_name(config.pooling);
    out["output_shape"] = out_shape;
    out["layers"] = config.layers;
    out["batch"] = config.batch;
    out["threads"] = host_threads();
    out["load_seconds"] = load_seconds;
    out["fp32_seconds"] = fp32_seconds;
    out["fp32_gflops_per_second"] = config.flops_per_image() * config.batch / fp32_seconds * 1e-9;
    bool passed = true;
    if (!fp32_only) {
      progress("device-numerics reference (" + numerics.describe() + ")");
      t0 = std::chrono::steady_clock::now();
      const reference::DeviceNumericsModel device(weights, numerics);
      out["device_prepare_seconds"] = seconds_since(t0);
      std::vector<float> dev;
      const double device_seconds = median_seconds(repeat, [&] { dev = device.forward(images); });
      if (!save_device.empty()) formats::write_npy(save_device, {config.batch, config.width}, dev);
      const auto cmp = reference::compare_embeddings(dev, fp32, config.width);
      passed = cmp.all_finite && cmp.min_cosine > threshold;
      out["numerics"] = numerics.describe();
      out["device_numerics_seconds"] = device_seconds;
      out["cosines"] = cmp.cosines;
      out["min_cosine"] = cmp.min_cosine;
      out["max_abs_error"] = cmp.max_abs_error;
      out["all_finite"] = cmp.all_finite;
      out["passed"] = passed;
    }
    if (json) {
      std::cout << out.dump(1) << "\n";
    } else {
      std::printf("model %s, %d layers, batch %d, %d threads\n", config.name.c_str(), config.layers, config.batch,
                  host_threads());
      std::printf("FP32 reference: %.3f s (%.1f GFLOP/s)\n", fp32_seconds, out["fp32_gflops_per_second"].get<double>());
      if (!fp32_only) {
        std::printf("device numerics: %.3f s (%s)\n", out["device_numerics_seconds"].get<double>(),
                    numerics.describe().c_str());
        const auto& cos = out["cosines"];
        for (std::size_t i = 0; i < cos.size(); ++i) std::printf("embedding %zu: cosine %.9f\n", i, cos[i].get<double>());
        std::printf("min cosine %.9f, max abs error %.6g: %s\n", out["min_cosine"].get<double>(),
                    out["max_abs_error"].get<double>(), passed ? "PASS" : "FAIL");
      }
    }
    return passed ? kExitOk : kExitFailure;
  }
};

ReferenceCommand command;
const CommandRegistration registration("reference", "run the FP32 and device-numerics host references and compare",
                                       [](CLI::App& app) { return command.setup(app); });

}  // namespace
}  // namespace tilevit::cli
