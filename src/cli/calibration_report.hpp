#pragma once
// The calibration coverage of a program as compile, run and inspect report it (JSON), and
// the per-operation kernel maxima (compile --kernels, inspect --json).
#include <nlohmann/json.hpp>
#include <vector>

#include "compiler/calibration_coverage.hpp"

namespace tilevit::cli {

// {"scope", "compute_cycles", "calibrated_cycles", "uncalibrated_cycles", "calibrated_share",
//  "uncalibrated_kinds": [names], "kinds": [{"kind", "cycles", "uncalibrated_cycles"}]}
nlohmann::json coverage_json(const compiler::CalibrationCoverage& coverage);

// [{"operation", "kind", "in_loop", "calls", "max_cycles", "uncalibrated_cycles", "shape",
//   "matrix_cycles" (GEMM and attention kinds only)}]
nlohmann::json kernel_maxima_json(const std::vector<compiler::KernelMaximum>& maxima);

}  // namespace tilevit::cli
