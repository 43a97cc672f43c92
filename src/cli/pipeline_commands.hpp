#pragma once
// `tilevit compile` and `tilevit run` on a machine of several chips: the model pipelined
// over them (system/pipeline.hpp), run in one process or over MPI ranks
// (distributed/mpi_pipeline.hpp). docs/SCALE_OUT.md.
#include <string>

#include "cli/model_options.hpp"
#include "compiler/compile.hpp"

namespace tilevit::cli {

struct PipelineCompileRequest {
  const ModelOptions& model;
  std::string machine_option, package_file;
  compiler::CompileOptions options;
  bool json = false;
};
int compile_pipeline_command(const PipelineCompileRequest& request);

struct PipelineRunRequest {
  const ModelOptions& model;
  std::string machine_option, package_file, out_dir, save_embeddings;
  compiler::CompileOptions options;
  int inferences = 3;
  double threshold = 0.99;
  bool reference_fp32 = true, check_numerics = false, json = false, mpi = false;
};
int run_pipeline_command(const PipelineRunRequest& request);

// Whether a run or compile goes through the pipeline: the machine has several chips, or
// the package given is a pipeline's.
bool is_pipeline_machine(const std::string& machine_option);
bool is_pipeline_package(const std::string& package_file);

}  // namespace tilevit::cli
