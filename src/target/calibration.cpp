#include "target/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "support/atomic_file.hpp"
#include "support/error.hpp"
#include "support/median.hpp"

namespace tilevit::target {

namespace {

constexpr std::size_t kMaxCalibrationBytes = 4 << 20;
constexpr std::uint64_t kMaxDim = detail::kMaxMeasuredDim;
constexpr std::uint64_t kMaxCycles = detail::kMaxMeasuredCycles;
std::string type_of(const nlohmann::json& v) { return detail::json_type_of(v); }

}  // namespace

std::vector<Measurement> parse_calibration(std::string_view json_text, const std::string& source) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(source + ": not valid JSON (byte " + std::to_string(e.byte) + ")");
  } catch (const nlohmann::json::exception& e) {  // e.g. 1e999: a number no double holds
    throw Error(source + ": a number is out of range (" + e.what() + ")");
  }
  if (!doc.is_object()) throw Error(source + ": expected a JSON object at the top level, got " + type_of(doc));
  for (const auto& [key, value] : doc.items()) {
    if (key == "about" && !value.is_string()) throw Error(source + ": about: expected a string, got " + type_of(value));
    else if (key == "clock_hz" && !(value.is_number_unsigned() && value.get<std::uint64_t>() > 0))
      throw Error(source + ": clock_hz: expected a positive integer, got " + type_of(value));
    else if (key != "about" && key != "clock_hz" && key != "measurements")
      throw Error(source + ": " + key + ": unknown field (expected about, clock_hz, measurements)");
  }
  if (!doc.contains("measurements")) throw Error(source + ": measurements: missing required field");
  const auto& list = doc["measurements"];
  if (!list.is_array()) throw Error(source + ": measurements: expected an array, got " + type_of(list));

  std::vector<Measurement> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto& entry = list[i];
    const std::string where = source + ": measurements[" + std::to_string(i) + "]";
    if (!entry.is_object()) throw Error(where + ": expected an object, got " + type_of(entry));
    auto field_error = [&](std::string_view field, const std::string& what) {
      return Error(where + "." + std::string(field) + ": " + what);
    };
    auto integer = [&](std::string_view field, std::uint64_t min, std::uint64_t max) {
      const std::string name(field);
      if (!entry.contains(name)) throw field_error(field, "missing required field");
      const auto& v = entry.at(name);
      if (!v.is_number_unsigned() || v.get<std::uint64_t>() < min || v.get<std::uint64_t>() > max)
        throw field_error(field, "expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
                                     "], got " + type_of(v));
      return v.get<std::uint64_t>();
    };

    Measurement m;
    if (!entry.contains("kernel")) throw field_error("kernel", "missing required field");
    const auto& kernel = entry.at("kernel");
    if (!kernel.is_string()) throw field_error("kernel", "expected a string, got " + type_of(kernel));
    const auto parsed = kernel_from_string(kernel.get<std::string>());
    if (!parsed) {
      std::string known;
      for (Kernel k : all_kernels()) known += (known.empty() ? "" : ", ") + std::string(to_string(k));
      throw field_error("kernel", "unknown kernel \"" + kernel.get<std::string>() + "\" (known: " + known + ")");
    }
    m.call.kernel = *parsed;

    std::vector<std::string_view> allowed = {"kernel", "cycles"};
    if (m.call.kernel == Kernel::gemm) {
      allowed.push_back("precision");
      if (!entry.contains("precision")) throw field_error("precision", "missing required field");
      const auto& p = entry.at("precision");
      if (!p.is_string()) throw field_error("precision", "expected a string, got " + type_of(p));
      const auto precision = precision_from_string(p.get<std::string>());
      if (!precision) throw field_error("precision", "unknown precision \"" + p.get<std::string>() + "\" (known: fp16, fp8)");
      m.call.precision = *precision;
    }
    for (std::string_view dim : dim_names(m.call.kernel)) {
      allowed.push_back(dim);
      m.call.dims.push_back(integer(dim, 0, kMaxDim));
    }
    m.cycles = integer("cycles", 1, kMaxCycles);
    // A free-text remark on the measurement (the reference copy explains its softmax point).
    allowed.push_back("note");
    if (entry.contains("note") && !entry.at("note").is_string())
      throw field_error("note", "expected a string, got " + type_of(entry.at("note")));
    for (const auto& [key, value] : entry.items())
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
        throw field_error(key, "unknown field for kernel " + std::string(to_string(m.call.kernel)));
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<Measurement> load_calibration(const std::string& path) {
  return parse_calibration(read_text_file(path, kMaxCalibrationBytes), path);
}

CostCheckReport check_costs(const MachineDescription& machine, const std::vector<Measurement>& measurements) {
  CostCheckReport report;
  std::vector<double> abs_errors;
  for (const auto& m : measurements) {
    CostCheckEntry e{m, predict_cycles(machine, m.call), 0};
    e.error_percent = (static_cast<double>(e.predicted) - static_cast<double>(m.cycles)) / static_cast<double>(m.cycles) * 100;
    abs_errors.push_back(std::abs(e.error_percent));
    report.entries.push_back(std::move(e));
  }
  if (!abs_errors.empty()) {
    report.median_abs_error_percent = median(abs_errors);
    report.max_abs_error_percent = *std::max_element(abs_errors.begin(), abs_errors.end());
  }
  return report;
}

namespace {

void summarise(CatalogKindReport& kind) {
  std::vector<double> errors;
  for (const auto& p : kind.points) {
    errors.push_back(std::abs(p.error_percent));
    (p.point->use == MeasurementUse::fitted ? kind.fitted : kind.held_out) += 1;
  }
  if (errors.empty()) return;
  kind.median_abs_error_percent = median(errors);
  kind.max_abs_error_percent = *std::max_element(errors.begin(), errors.end());
}

}  // namespace

CatalogReport check_catalog(const MachineDescription& machine, const MeasurementCatalog& catalog) {
  CatalogReport report;
  report.generation = machine.costs.generation;
  const auto day = parse_day(machine.costs.generation);
  CatalogKindReport either{"softmax", {}, 0, 0, 0, 0};
  std::size_t compared = 0;
  for (Formula f : all_formulas()) {
    CatalogKindReport kind{std::string(to_string(f)), {}, 0, 0, 0, 0};
    std::vector<const CatalogPoint*> points;
    if (day) points = generation_points(catalog, f, *day);
    else
      for (const auto& p : catalog.points)
        if (p.formula == f) points.push_back(&p);
    for (const CatalogPoint* p : points) {
      const std::uint64_t predicted = p->softmax_either_mode ? softmax_cycles(machine, p->dims[0], p->dims[1])
                                                             : formula_cycles(machine, f, p->dims);
      const double error = (static_cast<double>(predicted) - static_cast<double>(p->cycles)) / static_cast<double>(p->cycles) * 100;
      (p->softmax_either_mode ? either : kind).points.push_back({p, predicted, error});
      ++compared;
    }
    summarise(kind);
    report.kinds.push_back(std::move(kind));
  }
  summarise(either);
  report.kinds.push_back(std::move(either));
  report.other_generations = catalog.points.size() - compared;
  return report;
}

}  // namespace tilevit::target
