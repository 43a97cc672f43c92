#pragma once
// The extension module `tilevit._tilevit` (docs/PYTHON.md): the compile pipeline and the
// run job of the C++ libraries behind the Python package python/tilevit. Shared between
// its files: a compiled or loaded program with where its weights come from.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <pybind11/pybind11.h>

#include "compiler/compile.hpp"
#include "compiler/step_costs.hpp"
#include "job/compile_job.hpp"
#include "model/weights.hpp"
#include "profile/profile.hpp"
#include "system/pipeline.hpp"

namespace tilevit::python {

namespace py = pybind11;

// Where a program's weights come from: the random test model of a seed, a Hugging Face
// directory, a safetensors file, or tensors given in memory (loaded when compiled).
struct WeightOrigin {
  std::uint64_t seed = 0;
  std::string model_dir, weights_file;
  std::shared_ptr<const model::ViTWeights> loaded;
  // The whole model for `config`, loaded once (the GIL released by the caller).
  std::shared_ptr<const model::ViTWeights> load(const model::ViTConfig& config);
  std::string describe() const;

 private:
  std::mutex mutex_;
};

// One chip's program, or a pipeline's over a machine of several chips.
struct Program {
  compiler::Executable chip;                         // a machine of one chip
  std::optional<system::CompiledPipeline> pipeline;  // of several (then `chip` is unused)
  compiler::ProgramSummary summary;  // one chip: estimated cycles, tiles, exchange, weights
  // The chip's program, or the pipeline's first stage (the model, its batch, the numerics).
  const compiler::Executable& first() const { return pipeline ? pipeline->stages.front().executable : chip; }
  // Modelled cycles of one call (a pipeline: its micro-batches through every stage).
  std::uint64_t estimated_cycles() const;
  std::size_t images_per_call() const;  // batch x micro-batches
  std::vector<std::byte> bytes;  // the package, as `tilevit compile --package` writes it
  std::string sha256, plan_origin;
  nlohmann::json plan;                   // the plan file's object
  std::optional<nlohmann::json> search;  // the plan search's report, when one ran
  double compile_seconds = 0;
  std::shared_ptr<WeightOrigin> weights = std::make_shared<WeightOrigin>();
  // The profile of one call (the same for every call: the cycles are modelled), made once.
  std::shared_ptr<const profile::Profile> profile();

 private:
  std::shared_ptr<const profile::Profile> profile_;
  std::mutex mutex_;
};

// JSON to Python objects and back, through the json module (dicts, lists, numbers, strings).
py::object to_python(const nlohmann::json& j);
nlohmann::json from_python(const py::handle& object);

// A plan given to compile: a plan file's text (one chip's, or a pipeline's on a machine of
// several chips), the name errors give it, and the exchange stream words asked for.
struct PlanSpec {
  std::optional<std::string> text;
  std::string source;
  std::optional<std::uint32_t> stream_words;
};

void bind_program(py::module_& m);  // compile, load, Program
// A pipeline over a machine of several chips compiled into `p` as `tilevit run` compiles it
// (job::compile_pipeline_planned: balanced and searched per stage, or pinned by a pipeline
// plan), its package adopted as read back; micro_batches images batches a call.
void compile_pipeline(Program& p, const model::ViTConfig& config, const model::NumericsConfig& numerics,
                      const target::MachineDescription& machine, const compiler::CompileOptions& options,
                      const PlanSpec& plan, const job::PlanSearchSettings& search, std::uint32_t micro_batches);
// A pipeline package's bytes (decoded and verified) adopted into `p`.
void adopt_pipeline(Program& p, std::vector<std::byte> bytes, const std::string& name);
// Rows of every stage's table (`table` of one chip's program), each with its "stage".
nlohmann::json stage_rows(const Program& p,
                          const std::function<nlohmann::json(const compiler::Executable&)>& table);
void bind_device(py::module_& m);   // Device, Profile, reference

}  // namespace tilevit::python
