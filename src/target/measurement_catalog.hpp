#pragma once
// Which tilevit cost formula each hardware measurement of the original measures, with which
// dims, from which kernel generation, and for what: fitted, held out (checked, not fitted)
// or not modelled (with the reason). Rules and the generation rule: docs/COST_MODEL.md.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "target/kernel_costs.hpp"
#include "target/kernel_measurements.hpp"

namespace tilevit::target {

enum class MeasurementUse { fitted, held_out, not_modelled };
std::string_view to_string(MeasurementUse use);

struct CatalogPoint {
  std::size_t index = 0;   // measurements[index]
  bool from_note = false;  // the "before N" value of the entry's note: the kernel before that day's change
  Formula formula = Formula::gemm_fp16;
  // Held-out points that name no softmax mode are compared with the cheaper mode.
  bool softmax_either_mode = false;
  std::vector<std::uint64_t> dims;  // formula_dims(formula)
  std::uint64_t cycles = 0;
  MeasurementDate date;
  MeasurementUse use = MeasurementUse::fitted;
  std::string why;  // why held out
};

struct NotModelled {
  std::size_t index = 0;
  std::string reason;
};

struct MeasurementCatalog {
  std::vector<KernelMeasurement> measurements;
  std::vector<CatalogPoint> points;  // fitted and held-out points, in measurement order
  std::vector<NotModelled> not_modelled;
};

MeasurementCatalog build_catalog(std::vector<KernelMeasurement> measurements);
// The embedded copy of kernels.json (src/target/machines/kernels.json), classified once.
const MeasurementCatalog& embedded_catalog();

// Generation rule: every date at which a formula has points is a change of that kernel.
// Generation G holds the formula's points dated on the latest such date <= G (not "(old)"),
// and the "(old)" points of the first such date after G (the kernel as it still was).
std::vector<const CatalogPoint*> generation_points(const MeasurementCatalog& catalog, Formula formula, int day);
// The generation just before the one G belongs to (the day before its latest date <= G).
std::optional<int> older_generation(const MeasurementCatalog& catalog, Formula formula, int day);

}  // namespace tilevit::target
