#include "cli/package_flags.hpp"

#include "support/error.hpp"

namespace tilevit::cli {

void require_same(const std::string& package_path, const std::string& flag, const std::string& asked,
                  const std::string& built) {
  if (asked == built) return;
  throw Error(package_path + ": built with " + flag + " " + built + ", " + asked +
                  " asked: a package's model is fixed when it is compiled (drop " + flag + ", or recompile)",
              kExitUsage);
}

void check_model_flags_match(const ModelOptions& model, const compiler::Executable& package,
                             const std::string& package_path) {
  const model::ViTConfig& built = package.config;
  if (model.given("--preset"))
    require_same(package_path, "--preset", model::ViTConfig::preset(model.preset).name, built.name);
  if (model.given("--layers")) require_same(package_path, "--layers", std::to_string(*model.layers), std::to_string(built.layers));
  if (model.given("--batch")) require_same(package_path, "--batch", std::to_string(model.batch), std::to_string(built.batch));
  if (model.given("--fp8-scale") || model.given("--calibrated-scales"))
    require_same(package_path, model.calibrated_scales ? "--calibrated-scales" : "--fp8-scale",
                 model.numerics().describe(), package.numerics.describe());
  if (!model.weights.empty()) {
    const int held = checkpoint_layers(model.weights);
    if (held < built.layers)
      throw Error(model.weights + ": the checkpoint holds " + std::to_string(held) + " encoder layers, the package " +
                  package_path + " runs " + std::to_string(built.layers));
  }
}

}  // namespace tilevit::cli
