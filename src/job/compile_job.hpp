#pragma once
// The compile of `tilevit compile` and `tilevit run` for one chip and for a pipeline over
// several (compile_pipeline_planned), and of the Python
// package (src/python): pinned by a plan file when given, searched as asked, a model that
// does not fit said in a user's terms (capacity.hpp). The command line adds its flags'
// checks around it (cli/plan_search_flags).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "compiler/compile.hpp"
#include "compiler/plan_file.hpp"
#include "system/pipeline.hpp"

namespace tilevit::job {

struct PlannedCompile {
  compiler::CompiledModel compiled;
  compiler::PlanFile plan;               // what --write-plan writes: target, every grid, W
  std::optional<nlohmann::json> report;  // the search's, when one ran or a report was asked for
};

struct PlanSearchSettings {
  std::uint32_t steps = 8;  // candidates beyond the baseline (0: the heuristic or pinned plan)
  double seconds = 0;       // cap on the search's wall time (0: none)
  bool report = false;      // make the report even without a search
  std::function<void(const std::string&)> progress;
};

// Compiles `graph` with `options` (its plan's pins already applied from a plan file named
// `plan_source`, or empty), searching as `search` says, over every host thread. A model
// that does not fit throws compiler::DoesNotFit: without a plan, one line with the largest
// batch and layer count that do fit; with one, "<plan_source>: the model does not fit with
// this plan: ...". Both kExitBadInput.
// The pipeline over a machine of several chips: balanced and searched as `search` says, or
// pinned by the stage plans of the pipeline plan file `plan_source` (empty: none; read by
// system::read_pipeline_plan_file or parse_pipeline_plan_file). A pin the compiler refuses
// is the file's error, naming the file and the stage.
system::CompiledPipeline compile_pipeline_planned(const model::ViTConfig& config, const model::NumericsConfig& numerics,
                                                  const target::MachineDescription& machine,
                                                  const compiler::CompileOptions& options,
                                                  const system::StageSearchOptions& search,
                                                  const std::vector<system::StagePlan>& pinned,
                                                  const std::string& plan_source);

// Runs `work` (a compile pinned by `plan_file`, when not empty): an error of a pin the
// compiler refuses (compiler::RefusedPin) becomes an input error naming the file.
void with_plan_file_errors(const std::string& plan_file, const std::function<void()>& work);

PlannedCompile compile_planned(const compiler::Graph& graph, const target::MachineDescription& machine,
                               const compiler::CompileOptions& options, const std::string& plan_source,
                               const PlanSearchSettings& search);

// One row per superstep (`tilevit compile --steps`): its modelled cycles (compute by kind
// on the slowest tile, exchange as scheduled, phase overhead) and the exchange's floors.
nlohmann::json steps_json(const target::MachineDescription& machine, const compiler::CompiledProgram& program);

// One row per kernel call of the program, in program order: step, tile, kind, its dims,
// modelled cycles and FLOPs.
nlohmann::json kernel_calls_json(const target::MachineDescription& machine, const compiler::CompiledProgram& program);

}  // namespace tilevit::job
