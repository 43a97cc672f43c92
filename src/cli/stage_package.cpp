#include "cli/stage_package.hpp"

#include "support/error.hpp"
#include "system/pipeline_package.hpp"

namespace tilevit::cli {

std::string stage_text(std::uint32_t stage, std::uint32_t stages) {
  return "stage " + std::to_string(stage) + " of " + std::to_string(stages);
}

std::string StagePackage::stage_text() const { return stage ? cli::stage_text(*stage, stages) : std::string(); }

void StagePackage::describe(nlohmann::json& out, const std::string& path) const {
  out["package"] = path;
  out["package_sha256"] = file_sha256;
  if (!stage) return;  // a one-chip package's JSON keeps its form
  out["stage"] = *stage;
  out["stages"] = stages;
  out["stage_sha256"] = package.sha256;
  out["stage_layers"] = {{"first", package.contents.stage.first_layer}, {"count", package.contents.program.loop_count}};
}

void add_stage_option(CLI::App& app, std::optional<std::uint32_t>& stage) {
  app.add_option("--stage", stage, "of a pipeline package (several chips): the stage to show, 0..K-1")
      ->type_name("N")
      ->check(CLI::NonNegativeNumber);
}

std::uint32_t check_stage_flag(const std::string& path, const package::Container& container,
                               std::optional<std::uint32_t> stage, bool stage_required) {
  if (!system::is_pipeline(container)) {
    if (stage)
      throw Error(path + ": --stage " + std::to_string(*stage) + " given, but this is a one-chip package (no stages)",
                  kExitUsage);
    return 1;
  }
  const std::uint32_t stages = system::pipeline_stage_count(container);
  const std::string give = "pipeline package of " + std::to_string(stages) + " stages: give --stage 0.." +
                           std::to_string(stages - 1);
  if (!stage && stage_required) throw Error(path + ": " + give, kExitUsage);
  if (stage && *stage >= stages)
    throw Error(path + ": --stage " + std::to_string(*stage) + " out of range: " + give, kExitUsage);
  return stages;
}

StagePackage load_stage_package(const std::string& path, std::optional<std::uint32_t> stage) {
  const package::Container container = package::Container::open(path);
  const std::uint32_t stages = check_stage_flag(path, container, stage, true);
  if (!stage) {
    package::VerifiedPackage one = package::verify_package(container);
    std::string sha = one.sha256;
    return {std::move(one), std::move(sha), std::nullopt, 1};
  }
  return {system::decode_pipeline_stage(container, *stage), container.sha256_hex(), stage, stages};
}

}  // namespace tilevit::cli
