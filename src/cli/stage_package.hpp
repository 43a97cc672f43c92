#pragma once
// `--stage N` of the commands that show or check a package (inspect, memory-map, verify):
// the one place that turns a file and the flag into the one-chip program to look at, stage
// N of a pipeline package (system/pipeline_package.hpp) or the file itself. docs/SCALE_OUT.md.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "package/verified_package.hpp"

namespace tilevit::cli {

struct StagePackage {
  package::VerifiedPackage package;  // the file's one-chip package, or stage N's (its sha256: the stage's)
  std::string file_sha256;           // of the whole file
  std::optional<std::uint32_t> stage;
  std::uint32_t stages = 1;  // of the pipeline; 1 for a one-chip package

  // "stage 1 of 2" for a stage, "" for a one-chip package: for titles and text output.
  std::string stage_text() const;
  // package, package_sha256 (the file's), and for a stage: stage, stages, stage_sha256, stage_layers.
  void describe(nlohmann::json& out, const std::string& path) const;
};

// "stage 1 of 2".
std::string stage_text(std::uint32_t stage, std::uint32_t stages);

void add_stage_option(CLI::App& app, std::optional<std::uint32_t>& stage);

// The usage errors of --stage against the file, each one line naming it (kExitUsage):
// a pipeline package without --stage when `stage_required` ("pipeline package of K
// stages: give --stage 0..K-1"), N out of range, --stage on a one-chip package. Returns
// the pipeline's stage count, 1 for a one-chip package.
std::uint32_t check_stage_flag(const std::string& path, const package::Container& container,
                               std::optional<std::uint32_t> stage, bool stage_required);

// Stage N of a pipeline package, verified exactly as a one-chip package is
// (system::decode_pipeline_stage), or the one-chip package itself, after
// check_stage_flag(..., true). Error(kExitBadInput) for a damaged file.
StagePackage load_stage_package(const std::string& path, std::optional<std::uint32_t> stage);

}  // namespace tilevit::cli
