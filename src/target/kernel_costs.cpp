#include "target/kernel_costs.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "support/error.hpp"
#include "target/measurement_catalog.hpp"

namespace tilevit::target {

namespace {

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0); }

// Coefficients may be fractional (fitted averages); a call takes whole cycles. The small
// slack keeps an exactly integral sum from rounding up through floating-point noise.
// A count that does not fit 64 bits (huge dims or coefficients from a file) is an input
// error, not a value to cast.
std::uint64_t whole_cycles(double cycles) {
  const double whole = std::ceil(cycles - 1e-6);
  if (!(whole < 0x1p64)) throw Error("predicted kernel cost of " + std::to_string(cycles) + " cycles is out of range");
  return whole <= 0 ? 0 : static_cast<std::uint64_t>(whole);
}

constexpr std::array<Kernel, 11> kKernels = {Kernel::gemm,          Kernel::layernorm,          Kernel::gelu,
                                             Kernel::softmax,       Kernel::reduce_add,         Kernel::add,
                                             Kernel::cast_fp16_fp8, Kernel::copy,               Kernel::layer_norm_moments,
                                             Kernel::layer_norm_apply, Kernel::gelu_f8out};
constexpr std::string_view kGemmDims[] = {"rows", "inner", "columns"};
constexpr std::string_view kRowsWidth[] = {"rows", "width"};
constexpr std::string_view kElements[] = {"elements"};
constexpr std::string_view kRowsKeys[] = {"rows", "keys"};
constexpr std::string_view kReduceDims[] = {"elements", "partials"};
constexpr std::string_view kBytes[] = {"bytes"};

}  // namespace

std::string_view to_string(Kernel kernel) {
  switch (kernel) {
    case Kernel::gemm: return "gemm";
    case Kernel::layernorm: return "layernorm";
    case Kernel::gelu: return "gelu";
    case Kernel::softmax: return "softmax";
    case Kernel::reduce_add: return "reduce_add";
    case Kernel::add: return "add";
    case Kernel::cast_fp16_fp8: return "cast_fp16_fp8";
    case Kernel::copy: return "copy";
    case Kernel::layer_norm_moments: return "layer_norm_moments";
    case Kernel::layer_norm_apply: return "layer_norm_apply";
    case Kernel::gelu_f8out: return "gelu_f8out";
  }
  return "?";
}

std::string_view to_string(Precision precision) { return precision == Precision::fp16 ? "fp16" : "fp8"; }

std::optional<Kernel> kernel_from_string(std::string_view name) {
  for (Kernel k : kKernels)
    if (to_string(k) == name) return k;
  return std::nullopt;
}

std::optional<Precision> precision_from_string(std::string_view name) {
  if (name == "fp16") return Precision::fp16;
  if (name == "fp8") return Precision::fp8;
  return std::nullopt;
}

std::span<const Kernel> all_kernels() { return kKernels; }

std::span<const std::string_view> dim_names(Kernel kernel) {
  switch (kernel) {
    case Kernel::gemm: return kGemmDims;
    case Kernel::layernorm: return kRowsWidth;
    case Kernel::softmax: return kRowsKeys;
    case Kernel::reduce_add: return kReduceDims;
    case Kernel::copy: return kBytes;
    case Kernel::gelu:
    case Kernel::add:
    case Kernel::cast_fp16_fp8:
    case Kernel::layer_norm_moments:
    case Kernel::layer_norm_apply:
    case Kernel::gelu_f8out: return kElements;
  }
  return {};
}

std::string describe(const KernelCall& call) {
  std::string out;
  if (call.kernel == Kernel::gemm) {
    out = std::string(to_string(call.precision)) + " ";
    for (std::size_t i = 0; i < call.dims.size(); ++i) out += (i ? "x" : "") + std::to_string(call.dims[i]);
    return out;
  }
  const auto names = dim_names(call.kernel);
  for (std::size_t i = 0; i < call.dims.size() && i < names.size(); ++i)
    out += (i ? " " : "") + std::string(names[i]) + "=" + std::to_string(call.dims[i]);
  return out;
}

std::uint64_t busiest_worker_elements(std::uint64_t elements, std::uint32_t workers, std::uint32_t grain) {
  const std::uint64_t grains = elements / grain, remainder = elements % grain;
  // Whole grains go round robin; the partial grain goes to the next worker in turn.
  const std::uint64_t most = grain * ceil_div(grains, workers);
  const std::uint64_t with_tail = grain * (grains / workers) + remainder;
  return std::max(most, with_tail);
}

std::uint64_t worker_vectors(const MachineDescription& m, std::uint64_t elements) {
  return ceil_div(busiest_worker_elements(elements, m.workers, m.costs.worker_grain), m.costs.vector_elements);
}

namespace {

constexpr std::array<Formula, 12> kFormulas = {
    Formula::gemm_fp16, Formula::gemm_fp8,   Formula::layernorm,     Formula::softmax_whole,
    Formula::softmax_split, Formula::gelu,   Formula::add,           Formula::reduce_add,
    Formula::cast_fp16_fp8, Formula::layer_norm_moments, Formula::layer_norm_apply, Formula::gelu_f8out};
constexpr std::string_view kGemm16Keys[] = {"gemm_fp16_base", "gemm_fp16_per_row", "gemm_fp16_per_panel"};
constexpr std::string_view kGemm8Keys[] = {"gemm_fp8_base", "gemm_fp8_per_row", "gemm_fp8_per_panel"};
constexpr std::string_view kLayernormKeys[] = {"layernorm_base", "layernorm_per_row", "layernorm_per_row_vector"};
constexpr std::string_view kWholeKeys[] = {"softmax_whole_base", "softmax_whole_per_row_vector"};
constexpr std::string_view kSplitKeys[] = {"softmax_split_base", "softmax_split_per_row", "softmax_split_per_segment_vector"};
constexpr std::string_view kGeluKeys[] = {"gelu_base", "gelu_per_vector"};
constexpr std::string_view kAddKeys[] = {"add_base", "add_per_vector"};
constexpr std::string_view kReduceKeys[] = {"reduce_add_base", "reduce_add_per_vector", "reduce_add_per_vector_partial"};
constexpr std::string_view kCastKeys[] = {"cast_fp16_fp8_base", "cast_fp16_fp8_per_vector"};
constexpr std::string_view kMomentsKeys[] = {"layer_norm_moments_base", "layer_norm_moments_per_vector"};
constexpr std::string_view kApplyKeys[] = {"layer_norm_apply_base", "layer_norm_apply_per_vector"};
constexpr std::string_view kGeluF8Keys[] = {"gelu_f8out_base", "gelu_f8out_per_vector"};

double as_double(std::uint64_t v) { return static_cast<double>(v); }

}  // namespace

std::span<const Formula> all_formulas() { return kFormulas; }

std::string_view to_string(Formula f) {
  switch (f) {
    case Formula::gemm_fp16: return "gemm_fp16";
    case Formula::gemm_fp8: return "gemm_fp8";
    case Formula::layernorm: return "layernorm";
    case Formula::softmax_whole: return "softmax_whole";
    case Formula::softmax_split: return "softmax_split";
    case Formula::gelu: return "gelu";
    case Formula::add: return "add";
    case Formula::reduce_add: return "reduce_add";
    case Formula::cast_fp16_fp8: return "cast_fp16_fp8";
    case Formula::layer_norm_moments: return "layer_norm_moments";
    case Formula::layer_norm_apply: return "layer_norm_apply";
    case Formula::gelu_f8out: return "gelu_f8out";
  }
  return "?";
}

std::span<const std::string_view> formula_dims(Formula f) {
  switch (f) {
    case Formula::gemm_fp16:
    case Formula::gemm_fp8: return kGemmDims;
    case Formula::layernorm: return kRowsWidth;
    case Formula::softmax_whole:
    case Formula::softmax_split: return kRowsKeys;
    case Formula::reduce_add: return kReduceDims;
    case Formula::gelu:
    case Formula::add:
    case Formula::cast_fp16_fp8:
    case Formula::layer_norm_moments:
    case Formula::layer_norm_apply:
    case Formula::gelu_f8out: return kElements;
  }
  return {};
}

std::span<const std::string_view> formula_keys(Formula f) {
  switch (f) {
    case Formula::gemm_fp16: return kGemm16Keys;
    case Formula::gemm_fp8: return kGemm8Keys;
    case Formula::layernorm: return kLayernormKeys;
    case Formula::softmax_whole: return kWholeKeys;
    case Formula::softmax_split: return kSplitKeys;
    case Formula::gelu: return kGeluKeys;
    case Formula::add: return kAddKeys;
    case Formula::reduce_add: return kReduceKeys;
    case Formula::cast_fp16_fp8: return kCastKeys;
    case Formula::layer_norm_moments: return kMomentsKeys;
    case Formula::layer_norm_apply: return kApplyKeys;
    case Formula::gelu_f8out: return kGeluF8Keys;
  }
  return {};
}

std::vector<double*> formula_coefficients(CostCoefficients& c, Formula f) {
  switch (f) {
    case Formula::gemm_fp16: return {&c.gemm_fp16.base, &c.gemm_fp16.per_row, &c.gemm_fp16.per_panel};
    case Formula::gemm_fp8: return {&c.gemm_fp8.base, &c.gemm_fp8.per_row, &c.gemm_fp8.per_panel};
    case Formula::layernorm: return {&c.layernorm_base, &c.layernorm_per_row, &c.layernorm_per_row_vector};
    case Formula::softmax_whole: return {&c.softmax_whole_base, &c.softmax_whole_per_row_vector};
    case Formula::softmax_split:
      return {&c.softmax_split_base, &c.softmax_split_per_row, &c.softmax_split_per_segment_vector};
    case Formula::gelu: return {&c.gelu_base, &c.gelu_per_vector};
    case Formula::add: return {&c.add_base, &c.add_per_vector};
    case Formula::reduce_add: return {&c.reduce_add_base, &c.reduce_add_per_vector, &c.reduce_add_per_vector_partial};
    case Formula::cast_fp16_fp8: return {&c.cast_base, &c.cast_per_vector};
    case Formula::layer_norm_moments: return {&c.layer_norm_moments_base, &c.layer_norm_moments_per_vector};
    case Formula::layer_norm_apply: return {&c.layer_norm_apply_base, &c.layer_norm_apply_per_vector};
    case Formula::gelu_f8out: return {&c.gelu_f8out_base, &c.gelu_f8out_per_vector};
  }
  return {};
}

std::vector<double> formula_coefficients(const CostCoefficients& c, Formula f) {
  std::vector<double> values;
  for (double* p : formula_coefficients(const_cast<CostCoefficients&>(c), f)) values.push_back(*p);
  return values;
}

std::vector<double> formula_terms(const MachineDescription& m, Formula f, std::span<const std::uint64_t> d) {
  if (d.size() != formula_dims(f).size())
    throw Error("formula " + std::string(to_string(f)) + ": expected " + std::to_string(formula_dims(f).size()) +
                    " dims, got " + std::to_string(d.size()),
                kExitInternal);
  const auto& c = m.costs;
  switch (f) {
    case Formula::gemm_fp16:
    case Formula::gemm_fp8: {
      // The matrix unit walks the right operand panel by panel; per panel it streams every
      // row of the left operand and (serially, no double buffering) loads the coefficients.
      const GemmCoefficients& g = f == Formula::gemm_fp16 ? c.gemm_fp16 : c.gemm_fp8;
      const double panels = as_double(ceil_div(d[1], g.panel_inner) * ceil_div(d[2], g.panel_columns));
      return {1, panels * as_double(d[0]), panels};
    }
    case Formula::layernorm:
      // Rows one after another; each row split over the workers, with a fixed cost for the
      // cross-worker mean/variance reduction.
      return {1, as_double(d[0]), as_double(d[0] * worker_vectors(m, d[1]))};
    case Formula::softmax_whole:
    {
      // Each worker takes whole rows: the busiest one runs ceil(rows / workers) rows alone,
      // each padded to whole grains of every worker (729 keys -> 768, "768 padded").
      const std::uint64_t padded_row = ceil_div(d[1], std::uint64_t{m.workers} * c.worker_grain) * m.workers * c.worker_grain;
      return {1, as_double(ceil_div(d[0], m.workers) * ceil_div(padded_row, c.vector_elements))};
    }
    case Formula::softmax_split: {
      // Every row is cut into segments of whole grains (729 keys -> 3 x 256); the segments
      // of all rows are dealt to the workers; each row then merges its segments.
      const std::uint64_t segment = ceil_div(d[1], std::uint64_t{c.softmax_split_segments} * c.worker_grain) * c.worker_grain;
      const std::uint64_t per_worker = ceil_div(d[0] * c.softmax_split_segments, m.workers);
      return {1, as_double(d[0]), as_double(per_worker * ceil_div(segment, c.vector_elements))};
    }
    case Formula::gelu:
    case Formula::add:
    case Formula::cast_fp16_fp8:
    // The split LayerNorm's kernels take a block's elements in grains, rows one after
    // another: measured on one row (1 x 1152) only, so a block of several short rows is an
    // extrapolation (no per-row term can be fitted: docs/COST_MODEL.md).
    case Formula::layer_norm_moments:
    case Formula::layer_norm_apply:
    case Formula::gelu_f8out: return {1, as_double(worker_vectors(m, d[0]))};
    case Formula::reduce_add: {
      const double vectors = as_double(worker_vectors(m, d[0]));
      return {1, vectors, vectors * as_double(d[1])};
    }
  }
  return {};
}

std::uint64_t formula_cycles(const MachineDescription& m, Formula f, std::span<const std::uint64_t> dims) {
  const std::vector<double> terms = formula_terms(m, f, dims);
  const std::vector<double> coefficients = formula_coefficients(m.costs, f);
  double cycles = 0;
  for (std::size_t i = 0; i < terms.size(); ++i) cycles += terms[i] * coefficients[i];
  return whole_cycles(cycles);
}

std::uint64_t gemm_cycles(const MachineDescription& m, Precision precision, std::uint64_t rows, std::uint64_t inner,
                          std::uint64_t columns) {
  const std::uint64_t dims[] = {rows, inner, columns};
  return formula_cycles(m, precision == Precision::fp16 ? Formula::gemm_fp16 : Formula::gemm_fp8, dims);
}

std::uint64_t layernorm_cycles(const MachineDescription& m, std::uint64_t rows, std::uint64_t width) {
  const std::uint64_t dims[] = {rows, width};
  return formula_cycles(m, Formula::layernorm, dims);
}

std::string_view to_string(SoftmaxMode mode) { return mode == SoftmaxMode::whole_rows ? "whole rows" : "split rows"; }

Formula softmax_formula(SoftmaxMode mode) {
  return mode == SoftmaxMode::whole_rows ? Formula::softmax_whole : Formula::softmax_split;
}

SoftmaxMode softmax_mode(const MachineDescription& m, std::uint64_t rows, std::uint64_t keys) {
  const std::uint64_t dims[] = {rows, keys};
  return formula_cycles(m, Formula::softmax_split, dims) < formula_cycles(m, Formula::softmax_whole, dims)
             ? SoftmaxMode::split_rows
             : SoftmaxMode::whole_rows;
}

std::uint64_t softmax_cycles(const MachineDescription& m, std::uint64_t rows, std::uint64_t keys) {
  const std::uint64_t dims[] = {rows, keys};
  return std::min(formula_cycles(m, Formula::softmax_split, dims), formula_cycles(m, Formula::softmax_whole, dims));
}

std::uint64_t gelu_cycles(const MachineDescription& m, std::uint64_t elements) {
  return formula_cycles(m, Formula::gelu, std::span<const std::uint64_t>(&elements, 1));
}

std::uint64_t reduce_add_cycles(const MachineDescription& m, std::uint64_t elements, std::uint64_t partials) {
  const std::uint64_t dims[] = {elements, partials};
  return formula_cycles(m, Formula::reduce_add, dims);
}

std::uint64_t add_cycles(const MachineDescription& m, std::uint64_t elements) {
  return formula_cycles(m, Formula::add, std::span<const std::uint64_t>(&elements, 1));
}

std::uint64_t cast_fp16_fp8_cycles(const MachineDescription& m, std::uint64_t elements) {
  return formula_cycles(m, Formula::cast_fp16_fp8, std::span<const std::uint64_t>(&elements, 1));
}

std::uint64_t layer_norm_moments_cycles(const MachineDescription& m, std::uint64_t elements) {
  return formula_cycles(m, Formula::layer_norm_moments, std::span<const std::uint64_t>(&elements, 1));
}

std::uint64_t layer_norm_apply_cycles(const MachineDescription& m, std::uint64_t elements) {
  return formula_cycles(m, Formula::layer_norm_apply, std::span<const std::uint64_t>(&elements, 1));
}

std::uint64_t gelu_f8out_cycles(const MachineDescription& m, std::uint64_t elements) {
  return formula_cycles(m, Formula::gelu_f8out, std::span<const std::uint64_t>(&elements, 1));
}

std::uint64_t copy_cycles(const MachineDescription& m, std::uint64_t bytes) {
  return whole_cycles(m.costs.copy_base + static_cast<double>(bytes) / m.costs.copy_bytes_per_cycle);
}

bool formula_calibrated(const MachineDescription& m, Formula formula) {
  const auto day = parse_day(m.costs.generation);
  if (!day) return false;
  // Called per kernel call by the step costs: the answers are kept per generation, per
  // thread (no lock on the hot path).
  thread_local std::map<int, std::array<bool, kFormulas.size()>> known;
  auto it = known.find(*day);
  if (it == known.end()) {
    std::array<bool, kFormulas.size()> calibrated{};
    for (std::size_t i = 0; i < kFormulas.size(); ++i)
      for (const CatalogPoint* p : generation_points(embedded_catalog(), kFormulas[i], *day))
        calibrated[i] = calibrated[i] || p->use == MeasurementUse::fitted;
    it = known.emplace(*day, calibrated).first;
  }
  return it->second[static_cast<std::size_t>(formula)];
}

bool kernel_calibrated(const MachineDescription& m, Kernel kernel) {
  switch (kernel) {
    case Kernel::gemm: return formula_calibrated(m, Formula::gemm_fp16) && formula_calibrated(m, Formula::gemm_fp8);
    case Kernel::softmax:
      return formula_calibrated(m, Formula::softmax_whole) && formula_calibrated(m, Formula::softmax_split);
    case Kernel::layernorm: return formula_calibrated(m, Formula::layernorm);
    case Kernel::gelu: return formula_calibrated(m, Formula::gelu);
    case Kernel::reduce_add: return formula_calibrated(m, Formula::reduce_add);
    case Kernel::add: return formula_calibrated(m, Formula::add);
    case Kernel::cast_fp16_fp8: return formula_calibrated(m, Formula::cast_fp16_fp8);
    case Kernel::copy: return false;  // 288 + 8 B/cycle is a quoted rule of thumb, not a measured call
    case Kernel::layer_norm_moments: return formula_calibrated(m, Formula::layer_norm_moments);
    case Kernel::layer_norm_apply: return formula_calibrated(m, Formula::layer_norm_apply);
    case Kernel::gelu_f8out: return formula_calibrated(m, Formula::gelu_f8out);
  }
  return false;
}

std::uint64_t predict_cycles(const MachineDescription& m, const KernelCall& call) {
  const auto names = dim_names(call.kernel);
  if (call.dims.size() != names.size())
    throw Error("kernel " + std::string(to_string(call.kernel)) + ": expected " + std::to_string(names.size()) +
                    " dims, got " + std::to_string(call.dims.size()),
                kExitInternal);
  const auto& d = call.dims;
  switch (call.kernel) {
    case Kernel::gemm: return gemm_cycles(m, call.precision, d[0], d[1], d[2]);
    case Kernel::layernorm: return layernorm_cycles(m, d[0], d[1]);
    case Kernel::gelu: return gelu_cycles(m, d[0]);
    case Kernel::softmax: return softmax_cycles(m, d[0], d[1]);
    case Kernel::reduce_add: return reduce_add_cycles(m, d[0], d[1]);
    case Kernel::add: return add_cycles(m, d[0]);
    case Kernel::cast_fp16_fp8: return cast_fp16_fp8_cycles(m, d[0]);
    case Kernel::copy: return copy_cycles(m, d[0]);
    case Kernel::layer_norm_moments: return layer_norm_moments_cycles(m, d[0]);
    case Kernel::layer_norm_apply: return layer_norm_apply_cycles(m, d[0]);
    case Kernel::gelu_f8out: return gelu_f8out_cycles(m, d[0]);
  }
  return 0;
}

}  // namespace tilevit::target
