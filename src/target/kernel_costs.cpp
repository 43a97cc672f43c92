#include "target/kernel_costs.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "support/error.hpp"

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

constexpr std::array<Kernel, 8> kKernels = {Kernel::gemm,       Kernel::layernorm, Kernel::gelu,
                                            Kernel::softmax,    Kernel::reduce_add, Kernel::add,
                                            Kernel::cast_fp16_fp8, Kernel::copy};
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
    case Kernel::cast_fp16_fp8: return kElements;
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

std::uint64_t gemm_cycles(const MachineDescription& m, Precision precision, std::uint64_t rows, std::uint64_t inner,
                          std::uint64_t columns) {
  // The matrix unit walks the right operand panel by panel; per panel it streams every
  // row of the left operand and (serially, no double buffering) loads the coefficients.
  const GemmCoefficients& c = precision == Precision::fp16 ? m.costs.gemm_fp16 : m.costs.gemm_fp8;
  const double panels = static_cast<double>(ceil_div(inner, c.panel_inner) * ceil_div(columns, c.panel_columns));
  return whole_cycles(c.base + panels * (c.per_row * static_cast<double>(rows) + c.per_panel));
}

std::uint64_t layernorm_cycles(const MachineDescription& m, std::uint64_t rows, std::uint64_t width) {
  // Rows one after another; each row split over the workers, with a fixed cost for the
  // cross-worker mean/variance reduction.
  const auto& c = m.costs;
  const double per_row = c.layernorm_per_row + c.layernorm_per_row_vector * static_cast<double>(worker_vectors(m, width));
  return whole_cycles(c.layernorm_base + static_cast<double>(rows) * per_row);
}

std::uint64_t softmax_cycles(const MachineDescription& m, std::uint64_t rows, std::uint64_t keys) {
  // "Split mode": like LayerNorm, the keys of a row are split over the workers.
  const auto& c = m.costs;
  const double per_row = c.softmax_per_row + c.softmax_per_row_vector * static_cast<double>(worker_vectors(m, keys));
  return whole_cycles(c.softmax_base + static_cast<double>(rows) * per_row);
}

std::uint64_t gelu_cycles(const MachineDescription& m, std::uint64_t elements) {
  return whole_cycles(m.costs.gelu_base + m.costs.gelu_per_vector * static_cast<double>(worker_vectors(m, elements)));
}

std::uint64_t reduce_add_cycles(const MachineDescription& m, std::uint64_t elements, std::uint64_t partials) {
  const auto& c = m.costs;
  const double per_vector = c.reduce_add_per_vector + c.reduce_add_per_vector_partial * static_cast<double>(partials);
  return whole_cycles(c.reduce_add_base + per_vector * static_cast<double>(worker_vectors(m, elements)));
}

std::uint64_t add_cycles(const MachineDescription& m, std::uint64_t elements) {
  return whole_cycles(m.costs.add_base + m.costs.add_per_vector * static_cast<double>(worker_vectors(m, elements)));
}

std::uint64_t cast_fp16_fp8_cycles(const MachineDescription& m, std::uint64_t elements) {
  return whole_cycles(m.costs.cast_base + m.costs.cast_per_vector * static_cast<double>(worker_vectors(m, elements)));
}

std::uint64_t copy_cycles(const MachineDescription& m, std::uint64_t bytes) {
  return whole_cycles(m.costs.copy_base + static_cast<double>(bytes) / m.costs.copy_bytes_per_cycle);
}

bool kernel_calibrated(const MachineDescription&, Kernel kernel) {
  // Every formula of the embedded machines is fitted (docs/COST_MODEL.md) except the local
  // copy, whose 288 + 8 B/cycle is a quoted rule of thumb, not a measured call.
  return kernel != Kernel::copy;
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
  }
  return 0;
}

}  // namespace tilevit::target
