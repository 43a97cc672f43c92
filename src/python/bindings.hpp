#pragma once
// The extension module `tilevit._tilevit` (docs/PYTHON.md): the compile pipeline and the
// run job of the C++ libraries behind the Python package python/tilevit. Shared between
// its files: a compiled or loaded program with where its weights come from.
#include <cstdint>
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
#include "model/weights.hpp"
#include "profile/profile.hpp"

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

struct Program {
  compiler::Executable chip;
  compiler::ProgramSummary summary;  // estimated cycles, tiles, exchange, weights
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

void bind_program(py::module_& m);  // compile, load, Program
void bind_device(py::module_& m);   // Device, Profile, reference

}  // namespace tilevit::python
