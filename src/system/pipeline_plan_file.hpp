#pragma once
// Pipeline plan files (docs/COMPILER.md, "Plan files"): one JSON file holding the split
// and every stage's plan (a one-chip plan file's object each), written by `compile
// --write-plan` on a machine of several chips and read back by `--plan`, which rebuilds
// the same pipeline package byte for byte.
#include <string>
#include <vector>

#include "system/pipeline.hpp"

namespace tilevit::system {

inline constexpr int kPipelinePlanFileVersion = 1;

// The split and every stage's grids and W of a compiled pipeline (not of a loaded one:
// a package does not hold the plan).
std::vector<StagePlan> pipeline_plan(const CompiledPipeline& pipeline);

// The file's text, deterministic.
std::string pipeline_plan_file_text(const CompiledPipeline& pipeline);

// Reads `path` and checks it against the model and machine: version, one stage per chip,
// every stage at least one layer and the layers summing to the model's, each stage's plan
// parsed as a one-chip plan file made for `config` on one chip of `machine`. Throws
// Error(kExitBadInput), one line naming the file and field.
std::vector<StagePlan> read_pipeline_plan_file(const std::string& path, const model::ViTConfig& config,
                                               const target::MachineDescription& machine);
// The same for the file's text (`path` names it in errors): what read_pipeline_plan_file
// does after its bounded read, and what the fuzz target feeds.
std::vector<StagePlan> parse_pipeline_plan_file(const std::string& text, const std::string& path,
                                                const model::ViTConfig& config,
                                                const target::MachineDescription& machine);

}  // namespace tilevit::system
