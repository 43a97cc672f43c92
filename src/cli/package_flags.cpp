#include "cli/package_flags.hpp"

#include "package/container.hpp"
#include "support/error.hpp"
#include "system/pipeline_package.hpp"
#include "target/machine.hpp"

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

void require_pipeline_package(const std::string& package_path, const std::string& machine_option) {
  if (package_path.empty() || system::is_pipeline(package::Container::open(package_path))) return;
  const target::MachineDescription machine = target::machine_from_option(machine_option);
  throw Error(package_path + ": a one-chip package, but --machine " + machine_option + " names " +
                  std::to_string(machine.system.chips) + " chips (drop --machine, or compile a package for " +
                  machine_option + ")",
              kExitUsage);
}

}  // namespace tilevit::cli
