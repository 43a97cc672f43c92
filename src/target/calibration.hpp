#pragma once
// Measured kernel cycle counts (the format of calibration.json: {"measurements": [{"kernel":
// "gemm", "precision": "fp16", "rows": 184, ..., "cycles": 48654}, ...]}) and the
// comparison of the cost model against them, as `tilevit cost-check` prints it.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "target/kernel_costs.hpp"

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

}  // namespace tilevit::target
