#include "target/cost_fit.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "support/error.hpp"
#include "target/machine.hpp"

namespace tilevit::target {

namespace {

using Matrix = std::vector<std::vector<double>>;

// Rows of the relative-error system: terms / measured, target 1. Columns `keep` only.
Matrix relative_rows(const MachineDescription& m, Formula f, const std::vector<const CatalogPoint*>& points,
                     const std::vector<bool>& keep) {
  Matrix rows;
  for (const CatalogPoint* p : points) {
    const std::vector<double> terms = formula_terms(m, f, p->dims);
    std::vector<double> row;
    for (std::size_t j = 0; j < terms.size(); ++j)
      if (keep[j]) row.push_back(terms[j] / static_cast<double>(p->cycles));
    rows.push_back(std::move(row));
  }
  return rows;
}

// Rank by Gram-Schmidt on the columns, each normalised first (terms differ by orders of
// magnitude), with a relative tolerance.
std::size_t rank(const Matrix& rows) {
  if (rows.empty()) return 0;
  const std::size_t n = rows[0].size();
  std::vector<std::vector<double>> basis;
  for (std::size_t j = 0; j < n; ++j) {
    std::vector<double> v;
    for (const auto& r : rows) v.push_back(r[j]);
    double norm = 0;
    for (double x : v) norm += x * x;
    if (norm == 0) continue;
    for (double& x : v) x /= std::sqrt(norm);
    for (const auto& b : basis) {
      double dot = 0;
      for (std::size_t i = 0; i < v.size(); ++i) dot += v[i] * b[i];
      for (std::size_t i = 0; i < v.size(); ++i) v[i] -= dot * b[i];
    }
    double rest = 0;
    for (double x : v) rest += x * x;
    if (rest > 1e-12) {
      for (double& x : v) x /= std::sqrt(rest);
      basis.push_back(std::move(v));
    }
  }
  return basis.size();
}

// Least squares of rows * c = 1 by the normal equations (at most 3 unknowns, full rank).
std::vector<double> least_squares(const Matrix& rows) {
  const std::size_t n = rows[0].size();
  Matrix a(n, std::vector<double>(n + 1, 0));
  for (const auto& r : rows)
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) a[i][j] += r[i] * r[j];
      a[i][n] += r[i];
    }
  for (std::size_t col = 0; col < n; ++col) {  // Gauss-Jordan with partial pivoting
    std::size_t pivot = col;
    for (std::size_t i = col + 1; i < n; ++i)
      if (std::abs(a[i][col]) > std::abs(a[pivot][col])) pivot = i;
    std::swap(a[col], a[pivot]);
    for (std::size_t i = 0; i < n; ++i)
      if (i != col) {
        const double factor = a[i][col] / a[col][col];
        for (std::size_t j = col; j <= n; ++j) a[i][j] -= factor * a[col][j];
      }
  }
  std::vector<double> c(n);
  for (std::size_t i = 0; i < n; ++i) c[i] = a[i][n] / a[i][i];
  return c;
}

std::vector<const CatalogPoint*> fitted_only(const std::vector<const CatalogPoint*>& points) {
  std::vector<const CatalogPoint*> out;
  for (const CatalogPoint* p : points)
    if (p->use == MeasurementUse::fitted) out.push_back(p);
  return out;
}

std::size_t points_rank(const MachineDescription& m, Formula f, const std::vector<const CatalogPoint*>& points) {
  return rank(relative_rows(m, f, points, std::vector<bool>(formula_keys(f).size(), true)));
}

// Least squares with coefficients fixed at 0, in key order, until the rest are determined
// and none is negative (a machine file holds non-negative coefficients: a negative fixed
// cost fitted through two points is fixed at 0 instead, and the rest refitted).
std::vector<double> reduced_fit(const MachineDescription& m, Formula f, const std::vector<const CatalogPoint*>& points,
                                std::string& fixed) {
  const std::size_t n = formula_keys(f).size();
  std::vector<bool> keep(n, true);
  for (std::size_t dropped = 0;; ++dropped) {
    const Matrix rows = relative_rows(m, f, points, keep);
    const std::size_t kept = n - dropped;
    if (rank(rows) == kept) {
      const std::vector<double> solved = least_squares(rows);
      std::vector<double> c(n, 0);
      for (std::size_t j = 0, k = 0; j < n; ++j)
        if (keep[j]) c[j] = solved[k++];
      if (dropped + 1 == n || c[dropped] >= 0) return c;
    }
    if (dropped + 1 == n) throw Error("formula " + std::string(to_string(f)) + ": points determine no coefficient");
    keep[dropped] = false;
    fixed += (fixed.empty() ? "" : ", ") + std::string(formula_keys(f)[dropped]);
  }
}

std::string fit_method(std::size_t count, const std::string& fixed) {
  return "least squares on " + std::to_string(count) + " point" + (count == 1 ? "" : "s") +
         (fixed.empty() ? "" : " with " + fixed + " fixed at 0");
}

FormulaFit fit_formula(const MeasurementCatalog& catalog, const MachineDescription& m, Formula f, int day) {
  FormulaFit fit{f, {}, fitted_only(generation_points(catalog, f, day)), {}};
  const std::size_t n = formula_keys(f).size(), own = points_rank(m, f, fit.points);
  // The nearest older generation whose points determine the most coefficients, if it
  // determines more than this one's.
  std::optional<int> shape_day;
  std::vector<const CatalogPoint*> shape_points;
  std::size_t best = own;
  if (own < n)
    for (auto g = older_generation(catalog, f, day); g; g = older_generation(catalog, f, *g)) {
      auto points = fitted_only(generation_points(catalog, f, *g));
      if (const std::size_t r = points_rank(m, f, points); r > best) best = r, shape_day = g, shape_points = std::move(points);
    }
  std::string fixed;
  if (!shape_day) {
    if (fit.points.empty())
      throw Error("formula " + std::string(to_string(f)) + ": no measured points up to generation " + day_text(day));
    fit.coefficients = reduced_fit(m, f, fit.points, fixed);
    fit.method = fit_method(fit.points.size(), fixed);
  } else {
    const std::vector<double> shape = reduced_fit(m, f, shape_points, fixed);
    const std::string older = "generation " + day_text(*shape_day) + "'s " + fit_method(shape_points.size(), fixed);
    double scale = 1;
    if (!fit.points.empty()) {  // least squares of s * predicted / measured = 1
      double num = 0, den = 0;
      for (const CatalogPoint* p : fit.points) {
        const std::vector<double> terms = formula_terms(m, f, p->dims);
        double x = 0;
        for (std::size_t j = 0; j < n; ++j) x += terms[j] * shape[j];
        x /= static_cast<double>(p->cycles);
        num += x, den += x * x;
      }
      scale = num / den;
    }
    char factor[32];
    std::snprintf(factor, sizeof factor, "%.4f", scale);
    fit.method = fit.points.empty() ? "no points of this generation: " + older
                                    : older + ", scaled by " + factor + " on " + std::to_string(fit.points.size()) +
                                          " point" + (fit.points.size() == 1 ? "" : "s");
    for (double c : shape) fit.coefficients.push_back(c * scale);
  }
  const double unit = std::pow(10.0, kCoefficientDecimals);
  for (std::size_t i = 0; i < n; ++i) {
    fit.coefficients[i] = std::round(fit.coefficients[i] * unit) / unit;
    if (fit.coefficients[i] < 0)  // the machine file holds non-negative coefficients only
      throw Error("formula " + std::string(to_string(f)) + ": the fit gives " + std::string(formula_keys(f)[i]) + " < 0 (" +
                  fit.method + ")");
  }
  return fit;
}

std::string number(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", kCoefficientDecimals, v);
  std::string s = buffer;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

}  // namespace

GenerationFit fit_generation(const MeasurementCatalog& catalog, const std::string& generation) {
  const auto day = parse_day(generation);
  if (!day) throw Error("generation: expected a date YYYY-MM-DD, got \"" + generation + "\"", kExitUsage);
  // The structural parameters (workers, vector width, grain, panels, segments) are the
  // C600's stated machine rules; only the coefficients are fitted.
  const MachineDescription& machine = c600();
  GenerationFit fit{generation, {}};
  for (Formula f : all_formulas()) fit.formulas.push_back(fit_formula(catalog, machine, f, *day));
  return fit;
}

CostCoefficients apply_fit(CostCoefficients costs, const GenerationFit& fit) {
  costs.generation = fit.generation;
  for (const FormulaFit& f : fit.formulas) {
    const std::vector<double*> targets = formula_coefficients(costs, f.formula);
    for (std::size_t i = 0; i < targets.size(); ++i) *targets[i] = f.coefficients[i];
  }
  return costs;
}

std::string costs_section_text(const CostCoefficients& c, const GenerationFit& fit) {
  std::ostringstream out;
  out << "[costs]\ngeneration = " << fit.generation << "\nvector_elements = " << c.vector_elements
      << "\nworker_grain = " << c.worker_grain << "\nsoftmax_split_segments = " << c.softmax_split_segments << "\n";
  for (const auto& [name, g] : {std::pair{"gemm_fp16", &c.gemm_fp16}, std::pair{"gemm_fp8", &c.gemm_fp8}})
    out << name << "_panel_inner = " << g->panel_inner << "\n" << name << "_panel_columns = " << g->panel_columns << "\n";
  for (const FormulaFit& f : fit.formulas) {
    out << "# " << to_string(f.formula) << ": " << f.method << "\n";
    for (std::size_t i = 0; i < f.coefficients.size(); ++i)
      out << formula_keys(f.formula)[i] << " = " << number(f.coefficients[i]) << "\n";
  }
  out << "# copy: 288 + bytes / 8, a stated rule (MACHINE.md), not a measured call\ncopy_base = "
      << number(c.copy_base) << "\ncopy_bytes_per_cycle = " << number(c.copy_bytes_per_cycle) << "\n";
  return out.str();
}

}  // namespace tilevit::target
