// tilevit reference: the FP32 yardstick and the device-numerics reference on the same
// weights and images, compared by cosine.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/model_options.hpp"
#include "cli/package_flags.hpp"
#include "cli/pipeline_commands.hpp"
#include "cli/validators.hpp"
#include "formats/npy.hpp"
#include "package/verified_package.hpp"
#include "reference/compare.hpp"
#include "reference/forward.hpp"
#include "support/atomic_file.hpp"
#include "support/error.hpp"
#include "support/threads.hpp"
#include "system/pipeline_package.hpp"

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
  std::string save_fp32, save_device, package_file;
  bool json = false, fp32_only = false;
  int repeat = 1;
  double threshold = 0.99;

  CommandAction setup(CLI::App& app) {
    model.add_to(app);
    app.add_option("--package", package_file,
                   "take the model shape and the numerics from this package, with the GEMM and attention splits "
                   "its compiler chose: exactly the device's arithmetic (without it, sums are not split; a pipeline "
                   "package: the whole pipeline's, as `run --check-numerics` takes them)");
    app.add_option("--save-fp32", save_fp32, "write the FP32 embeddings as .npy [batch, width] ('-': standard output)");
    CLI::Option* device = app.add_option("--save-device", save_device,
                                         "write the device-numerics embeddings as .npy [batch, width] ('-': standard output)");
    CLI::Option* fp32 = app.add_flag("--fp32-only", fp32_only, "run only the FP32 reference (for timing)")->excludes(device);
    app.add_option("--repeat", repeat, "run each forward pass N times and report the median time")
        ->check(CLI::Range(1, 100))
        ->capture_default_str();
    app.add_option("--min-cosine", threshold, "pass threshold: every embedding's cosine must be above it")
        ->check(finite_real(0, 1, true))
        ->excludes(fp32)  // nothing to compare
        ->capture_default_str();
    app.add_flag("--json", json, "print one JSON object instead of text");
    return [this] { return run(); };
  }

  // The shape and numerics: the package's (with its splits), or the model flags'.
  struct RunModel {
    model::ViTConfig config;
    model::NumericsConfig numerics;
    std::vector<model::NumericsConfig> layer_numerics;  // per encoder layer (a pipeline's stages may differ)
  };
  static RunModel uniform(const model::ViTConfig& config, const model::NumericsConfig& numerics) {
    return {config, numerics, std::vector<model::NumericsConfig>(static_cast<std::size_t>(config.layers), numerics)};
  }
  RunModel model_of_run() const {
    if (package_file.empty()) return uniform(model.config(), model.numerics());
    if (is_pipeline_package(package_file)) {  // the whole model over its stages: no --stage here
      const system::LoadedPipeline loaded = system::load_pipeline(package_file);
      const compiler::Executable& first = loaded.pipeline.stages.front().executable;
      check_model_flags_match(model, first, package_file);
      return {first.config, system::pipeline_numerics(loaded.pipeline), system::pipeline_layer_numerics(loaded.pipeline)};
    }
    const package::VerifiedPackage loaded = package::load_verified_package(package_file);
    check_model_flags_match(model, loaded.contents, package_file);
    return uniform(loaded.contents.config, loaded.contents.numerics);
  }

  int run() {
    model.apply_threads();
    if (save_fp32 == "-" && save_device == "-")
      throw Error("--save-fp32 - and --save-device -: only one output can go to standard output", kExitUsage);
    for (const std::string* out : {&save_fp32, &save_device})
      if (!out->empty()) check_output_writable(*out);
    const auto [config, numerics, layer_numerics] = model_of_run();
    if (!model.images.empty() && static_cast<int>(model.images.size()) != config.batch)
      throw Error(package_file + " takes " + std::to_string(config.batch) + " images per call; " +
                      std::to_string(model.images.size()) + " --image given",
                  kExitUsage);
    const std::vector<std::int64_t> out_shape = config.output_shape();
    auto t0 = std::chrono::steady_clock::now();
    const auto images = model.load_images(config);  // a bad image fails before the weights load
    progress("loading weights (" + config.name + ", " + layers_text(config.layers) + ")");
    const model::ViTWeights weights = model.load_weights(config);
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
      const reference::DeviceNumericsModel device(weights, numerics, layer_numerics);
      out["device_prepare_seconds"] = seconds_since(t0);
      std::vector<float> dev;
      const double device_seconds = median_seconds(repeat, [&] { dev = device.forward(images); });
      if (!save_device.empty()) formats::write_npy(save_device, out_shape, dev);
      // One cosine per image, over its whole output (all its tokens for per-token outputs).
      const auto cmp = reference::compare_embeddings(dev, fp32, config.output_values_per_image());
      passed = cmp.all_finite && cmp.min_cosine > threshold;
      out["numerics"] = numerics.describe();
      out["splits"] = package_file.empty() ? "none: unsplit sums (--package P for the device's)" : "of " + package_file;
      out["device_numerics_seconds"] = device_seconds;
      out["cosines"] = cmp.cosines;
      out["min_cosine"] = cmp.min_cosine;
      out["max_abs_error"] = cmp.max_abs_error;
      out["all_finite"] = cmp.all_finite;
      out["passed"] = passed;
    }
    out["min_cosine_threshold"] = threshold;
    out["seed"] = model.seed;
    if (!package_file.empty()) out["package"] = package_file;
    // An embedding file on standard output moves the report to stderr.
    FILE* const report = save_fp32 == "-" || save_device == "-" ? stderr : stdout;
    std::fflush(stdout);
    if (json) {
      std::fprintf(report, "%s\n", out.dump(1).c_str());
    } else {
      std::fprintf(report, "model %s, %d layer%s, batch %d, %d threads\n", config.name.c_str(), config.layers,
                   config.layers == 1 ? "" : "s", config.batch, host_threads());
      std::fprintf(report, "FP32 reference: %.3f s (%.1f GFLOP/s)\n", fp32_seconds, out["fp32_gflops_per_second"].get<double>());
      if (!fp32_only) {
        std::fprintf(report, "device numerics: %.3f s (%s; splits: %s)\n", out["device_numerics_seconds"].get<double>(),
                     numerics.describe().c_str(), out["splits"].get<std::string>().c_str());
        const auto& cos = out["cosines"];
        for (std::size_t i = 0; i < cos.size(); ++i) std::fprintf(report, "embedding %zu: cosine %.9f\n", i, cos[i].get<double>());
        std::fprintf(report, "min cosine %.9f, max abs error %.6g: %s\n", out["min_cosine"].get<double>(),
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
