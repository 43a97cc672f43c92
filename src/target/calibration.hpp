#pragma once
// Measured kernel cycle counts (the format of calibration.json: {"measurements": [{"kernel":
// "gemm", "precision": "fp16", "rows": 184, ..., "cycles": 48654}, ...]}) and the
// comparison of the cost model against them, as `tilevit cost-check` prints it.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "target/kernel_costs.hpp"
#include "target/measurement_catalog.hpp"

namespace tilevit::target {

struct Measurement {
  KernelCall call;
  std::uint64_t cycles = 0;  // > 0
};

// Validates strictly: unknown kernel or precision, missing, negative or non-integer dims,
// unexpected fields and wrong types raise Error naming "<source>: measurements[i].<field>".
std::vector<Measurement> parse_calibration(std::string_view json_text, const std::string& source);
// Reads at most 4 MiB.
std::vector<Measurement> load_calibration(const std::string& path);

struct CostCheckEntry {
  Measurement measurement;
  std::uint64_t predicted = 0;
  double error_percent = 0;  // (predicted - measured) / measured * 100
};

struct CostCheckReport {
  std::vector<CostCheckEntry> entries;
  double median_abs_error_percent = 0;
  double max_abs_error_percent = 0;
};

CostCheckReport check_costs(const MachineDescription& machine, const std::vector<Measurement>& measurements);

// The cost model against a measurement catalog (kernels.json), per formula: the points of
// the machine's kernel generation (every point when the machine names none), fitted or
// held out, with their errors; held-out softmax points that name no mode against the
// cheaper mode, as kind "softmax".
struct CatalogCheckPoint {
  const CatalogPoint* point = nullptr;
  std::uint64_t predicted = 0;
  double error_percent = 0;
};
struct CatalogKindReport {
  std::string kind;  // formula name, or "softmax" (the cheaper mode)
  std::vector<CatalogCheckPoint> points;
  std::size_t fitted = 0, held_out = 0;
  double median_abs_error_percent = 0, max_abs_error_percent = 0;
};
struct CatalogReport {
  std::string generation;                // the machine's, empty if none
  std::vector<CatalogKindReport> kinds;  // all_formulas() order, then "softmax"
  std::size_t other_generations = 0;     // modelled points of other generations, not compared
};
CatalogReport check_catalog(const MachineDescription& machine, const MeasurementCatalog& catalog);

}  // namespace tilevit::target
