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

namespace {

// The GEMM roles a package of `c` records (package/program_codec.cpp): the others read back
// as defaults, so they are not compared.
int recorded_roles(const model::ViTConfig& c) {
  return c.projection_dim > 0 ? model::kGemmRoleCount : model::kSiglipGemmRoles;
}

bool same_scales(const model::NumericsConfig& a, const model::NumericsConfig& b, int roles) {
  for (int i = 0; i < roles; ++i)
    if (a.roles[i].fp8 != b.roles[i].fp8 || (a.roles[i].fp8 && a.roles[i].scale != b.roles[i].scale)) return false;
  return true;
}

// The flag that gives these scales: "--fp8-scale -4", "--calibrated-scales", or the roles.
std::string scales_text(const model::NumericsConfig& n, int roles) {
  if (same_scales(n, model::NumericsConfig::calibrated(), roles)) return "--calibrated-scales";
  bool uniform = true;
  for (int i = 0; i < roles; ++i) uniform &= n.roles[i].fp8 && n.roles[i].scale == n.roles[0].scale;
  if (uniform) return "--fp8-scale " + std::to_string(n.roles[0].scale);
  return "per-role scales (" + n.describe() + ")";
}

}  // namespace

void check_model_flags_match(const ModelOptions& model, const compiler::Executable& package,
                             const std::string& package_path) {
  const model::ViTConfig& built = package.config;
  if (model.given("--preset"))
    require_same(package_path, "--preset", model::ViTConfig::preset(model.preset).name, built.name);
  if (model.given("--layers")) require_same(package_path, "--layers", std::to_string(*model.layers), std::to_string(built.layers));
  if (model.given("--batch")) require_same(package_path, "--batch", std::to_string(model.batch), std::to_string(built.batch));
  if (model.given("--fp8-scale") || model.given("--calibrated-scales")) {
    const int roles = recorded_roles(built);
    const model::NumericsConfig asked = model.numerics();
    if (!same_scales(asked, package.numerics, roles))
      throw Error(package_path + ": built with " + scales_text(package.numerics, roles) + ", " + scales_text(asked, roles) +
                      " asked: a package's FP8 scales are fixed when it is compiled (drop " +
                      (model.calibrated_scales ? "--calibrated-scales" : "--fp8-scale") + ", or recompile)",
                  kExitUsage);
  }
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
