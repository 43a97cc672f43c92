#pragma once
// The plan flags shared by `compile` and `run`: --plan's W, and the plan search
// (--optimization-steps, --search-seconds, --optimization-report), with the compile they
// drive. Kept apart from the commands so each adds them with one call.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "compiler/compile.hpp"
#include "compiler/plan_file.hpp"
#include "job/compile_job.hpp"
#include "system/pipeline.hpp"

namespace tilevit::cli {

// The main job searches 8 candidates unless told otherwise (issue 20; docs/OPTIMISER.md).
// A --plan pins a plan already chosen, so it is rebuilt as it is unless
// --optimization-steps is given too.
inline constexpr std::uint32_t kDefaultOptimizationSteps = 8;

struct SearchFlags {
  std::uint32_t steps = kDefaultOptimizationSteps;
  double seconds = 0;
  std::string report_file;
  void add_to(CLI::App& app);
  // True when the command line set --optimization-steps or --optimization-report.
  bool asked() const;
  // The candidates to compile: the default only without a plan file.
  std::uint32_t steps_for(bool plan_given) const { return plan_given && !asked() ? 0 : steps; }
  // Before any work: --search-seconds with no search to cap, an unwritable report file.
  void check(bool plan_given) const;
  // True when the command line set --exchange-stream-words (a plan's W must then agree).
  bool stream_words_given() const;
  // The plan search per stage of a pipeline: these steps (steps_for) and cap, every host thread.
  system::StageSearchOptions for_stages(bool plan_given) const;

 private:
  CLI::App* app_ = nullptr;
};

using job::PlannedCompile;

// Compiles `graph` with `options`, pinned by `plan_file` when given (its W replaces
// options' unless --exchange-stream-words says otherwise: a usage error), searching when
// the flags ask; writes the report file. A model that does not fit is one line with the
// largest batch and layer count that do (job/capacity.hpp); with a plan, the plan file's
// error. Both kExitBadInput (job::compile_planned).
PlannedCompile compile_planned(const compiler::Graph& graph, const target::MachineDescription& machine,
                               compiler::CompileOptions options, const std::string& plan_file,
                               const SearchFlags& search);

}  // namespace tilevit::cli
