#pragma once
// `tilevit compile` and `tilevit run` on a machine of several chips: the model pipelined
// over them (system/pipeline.hpp), run in one process or over MPI ranks
// (distributed/mpi_pipeline.hpp). docs/SCALE_OUT.md.
#include <cstdint>
#include <optional>
#include <ostream>
#include <nlohmann/json.hpp>
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

// The pipeline compiled for `model` on the machine of several chips: balanced and
// searched as `search` says, or pinned by the pipeline plan file `plan_file`.
system::CompiledPipeline compile_for(const ModelOptions& model, const std::string& machine_option,
                                     const compiler::CompileOptions& options, const system::StageSearchOptions& search,
                                     const std::string& plan_file);
// --optimization-report of a pipeline: one plan search report per stage, in pipeline order.
void write_search_report(const std::string& file, const system::CompiledPipeline& pipeline);
// {"model", "parameters", "layers", "batch", "machine", "package_sha256", "pipeline"}.
nlohmann::json describe(const system::CompiledPipeline& pipeline, const std::string& sha);
// The stages, links, latency and throughput of describe()'s object, as text lines.
void print_pipeline(std::ostream& out, const nlohmann::json& described);
// --micro-batches out of bounds for the batch: one line, exit 2, before any work.
void check_micro_batches(std::uint32_t micro_batches, int batch);

// Whether a run or compile goes through the pipeline: the machine has several chips, or
// the package given is a pipeline's.
bool is_pipeline_machine(const std::string& machine_option);
bool is_pipeline_package(const std::string& package_file);

// --micro-batches: what it means, for compile's and run's --help.
extern const char* const kMicroBatchesHelp;
// --micro-batches on a machine of one chip: Error(kExitUsage), one line.
[[noreturn]] void refuse_micro_batches_on_one_chip();

}  // namespace tilevit::cli
