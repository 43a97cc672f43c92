#pragma once
// The hardware kernel measurements of the original system (the format of
// reference/measurements/kernels.json: {"measurements": [{"kernel": "gemm_f8 MLP up",
// "rows": 82, "keys": 192, "cycles": 29508, "mode": "...", "date": "2026-09-13", ...}]}).
// Entries are free-form descriptions of the original's kernels; measurement_catalog.hpp
// says which tilevit cost formula each one measures.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace tilevit::target {

// A measurement's date: "2026-09-13" (the kernel as of that day), "2026-09-13 (old)" (the
// kernel just before that day's change) or "2026-09-07/08" (a two-day run; its last day).
struct MeasurementDate {
  int day = 0;  // days since 1970-01-01
  bool old = false;
  bool operator==(const MeasurementDate&) const = default;
};
// Throws Error naming `where` on anything else.
MeasurementDate parse_measurement_date(std::string_view text, const std::string& where);
// "YYYY-MM-DD" -> days since 1970-01-01, nullopt if not a valid date.
std::optional<int> parse_day(std::string_view text);
std::string day_text(int day);

struct KernelMeasurement {
  std::string kernel;                 // the original's kernel name, e.g. "gemm_f8 MLP up"
  std::string precision;              // optional
  std::optional<std::uint64_t> rows;  // rows, as mode/shape/note say
  std::optional<std::uint64_t> keys;  // keys, width or inner K, as mode/shape/note say
  std::uint64_t cycles = 0;
  std::string mode, date_text, shape, note, source;
  MeasurementDate date;
};

// Validates strictly: wrong types, missing kernel/cycles/date, unknown fields, oversized
// strings or lists raise Error naming "<source>: measurements[i].<field>".
std::vector<KernelMeasurement> parse_kernel_measurements(std::string_view json_text, const std::string& source);

// Whether a JSON document's entries look like kernels.json (a "date" in the first entry)
// rather than the older calibration.json format.
bool is_kernel_measurements_format(std::string_view json_text);

namespace detail {
// Bounds shared with the calibration.json reader: kernel dims are 32-bit in packages; cycle
// counts beyond 2^53 would lose precision as doubles in the error percentages.
inline constexpr std::uint64_t kMaxMeasuredDim = UINT32_MAX;
inline constexpr std::uint64_t kMaxMeasuredCycles = std::uint64_t{1} << 53;
// A JSON value's type for messages: "non-negative integer 5", "-1", "number 8.5", "string".
std::string json_type_of(const nlohmann::json& value);
}  // namespace detail

}  // namespace tilevit::target
