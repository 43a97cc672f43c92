#pragma once
// Fitting the [costs] coefficients of one kernel generation to the measurement catalog:
// least squares on relative error, per formula, over the generation's fitted points.
// Where those points do not determine every coefficient, the nearest older generation
// whose points determine the most gives the shape and this generation's points one scale
// factor; where no older generation does better, the coefficients the points cannot
// separate are fixed at 0 in formula_keys order (the fixed cost first). docs/COST_MODEL.md.
#include <string>
#include <vector>

#include "target/measurement_catalog.hpp"

namespace tilevit::target {

// Coefficients are rounded to this many decimals: the machine file holds the printed values.
inline constexpr int kCoefficientDecimals = 3;

struct FormulaFit {
  Formula formula = Formula::gemm_fp16;
  std::vector<double> coefficients;         // formula_keys order, rounded
  std::vector<const CatalogPoint*> points;  // the generation's fitted points
  std::string method;                       // how, in words ("least squares on 5 points", ...)
};

struct GenerationFit {
  std::string generation;
  std::vector<FormulaFit> formulas;  // all_formulas() order
};

// Throws Error when `generation` is not a date or a formula has no points up to it.
GenerationFit fit_generation(const MeasurementCatalog& catalog, const std::string& generation);

// `costs` with the fitted coefficients and the generation set; other keys unchanged.
CostCoefficients apply_fit(CostCoefficients costs, const GenerationFit& fit);

// The [costs] section as a machine file holds it, with one comment line per formula.
std::string costs_section_text(const CostCoefficients& costs, const GenerationFit& fit);

}  // namespace tilevit::target
