#pragma once
// How far the whole-program model is from the hardware: the original's measured builds,
// replayed as replica plans (bench/replicas.json) and compiled by bench/replicas.py, which
// writes the table embedded here (machines/model_validation.json; the ctest
// model_validation_current keeps it current). Every compile and run report carries it
// (docs/FIDELITY.md, "The model against the measured builds").
#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace tilevit::target {

struct ModelValidation {
  std::uint32_t builds = 0;
  double min_error_percent = 0, max_error_percent = 0;  // model minus measured, percent of measured
};

const ModelValidation& model_validation();
// {"builds", "min_error_percent", "max_error_percent"}
nlohmann::json model_validation_json();
// "model validation: 5 measured builds of the original, modelled -23.3% to -4.2% of their cycles
// (bench/replicas.py, docs/FIDELITY.md)"
std::string model_validation_line();

}  // namespace tilevit::target
