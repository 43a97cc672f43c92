#include "cli/calibration_report.hpp"

namespace tilevit::cli {

nlohmann::json coverage_json(const compiler::CalibrationCoverage& c) {
  nlohmann::json kinds = nlohmann::json::array(), uncalibrated = nlohmann::json::array();
  for (const auto& k : c.kinds) {
    kinds.push_back({{"kind", compiler::kernel_name(k.kind)}, {"cycles", k.cycles}, {"uncalibrated_cycles", k.uncalibrated_cycles}});
    if (k.uncalibrated_cycles > 0) uncalibrated.push_back(compiler::kernel_name(k.kind));
  }
  return {{"scope", "compute cycles of each executed superstep's slowest tile; exchange and sync (machine rules) excluded"},
          {"compute_cycles", c.compute_cycles},
          {"calibrated_cycles", c.compute_cycles - c.uncalibrated_cycles},
          {"uncalibrated_cycles", c.uncalibrated_cycles},
          {"calibrated_share", c.calibrated_share()},
          {"local_copy_cycles", c.local_copy_cycles},
          {"uncalibrated_kinds", uncalibrated},
          {"kinds", kinds}};
}

nlohmann::json kernel_maxima_json(const std::vector<compiler::KernelMaximum>& maxima) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : maxima) {
    nlohmann::json row{{"operation", r.operation},       {"kind", compiler::kernel_name(r.kind)},
                       {"in_loop", r.in_loop},           {"calls", r.calls},
                       {"max_cycles", r.max_cycles},     {"uncalibrated_cycles", r.uncalibrated_cycles},
                       {"shape", r.shape}};
    if (r.matrix_cycles) row["matrix_cycles"] = *r.matrix_cycles;
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace tilevit::cli
