#pragma once
// `tilevit compile` and `tilevit run` on a machine of several chips: the model pipelined
// over them (system/pipeline.hpp), run in one process or over MPI ranks
// (distributed/mpi_pipeline.hpp). docs/SCALE_OUT.md.
#include <cstdint>
#include <optional>
#include <string>

#include "cli/model_options.hpp"
#include "compiler/compile.hpp"
#include "system/pipeline.hpp"

namespace tilevit::cli {

struct PipelineCompileRequest {
  const ModelOptions& model;
  std::string machine_option, package_file;
  compiler::CompileOptions options;
  bool json = false;
  std::uint32_t micro_batches = 1;  // recorded in the package: a call of micro_batches x batch images
  system::StageSearchOptions search;  // the plan search per stage
  std::string search_report_file;     // --optimization-report: every stage's search report
  std::string plan_file, write_plan;  // --plan, --write-plan: a pipeline plan file
};
int compile_pipeline_command(const PipelineCompileRequest& request);

struct PipelineRunRequest {
  const ModelOptions& model;
  std::string machine_option, package_file, out_dir, save_embeddings;
  compiler::CompileOptions options;
  int inferences = 3;
  double threshold = 0.99;
  bool reference_fp32 = true, check_numerics = false, json = false, mpi = false;
  // Compiled into the package; with --package it must be the package's (unset: take it).
  std::optional<std::uint32_t> micro_batches;
  system::StageSearchOptions search;  // when compiling here
  std::string search_report_file;
  std::string plan_file;  // --plan: a pipeline plan file
};
int run_pipeline_command(const PipelineRunRequest& request);

// Whether a run or compile goes through the pipeline: the machine has several chips, or
// the package given is a pipeline's.
bool is_pipeline_machine(const std::string& machine_option);
bool is_pipeline_package(const std::string& package_file);

// --micro-batches: what it means, for compile's and run's --help.
extern const char* const kMicroBatchesHelp;
// --micro-batches on a machine of one chip: Error(kExitUsage), one line.
[[noreturn]] void refuse_micro_batches_on_one_chip();

}  // namespace tilevit::cli
