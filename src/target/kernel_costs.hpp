#pragma once
// Kernel cost model: predicted cycles of one call of a device kernel on one tile. The
// formulas live here; every number in them comes from the machine's [costs] section, so a
// re-calibration is a data change. Derivation and fitted errors: docs/COST_MODEL.md.
//
// Vector kernels are split over the tile's workers. Work is dealt out in grains of
// `worker_grain` elements, and since workers issue round robin (each every `workers`-th
// cycle) a call lasts as long as its busiest worker, whose element count rounded up to
// whole vectors is what the vector terms count.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "target/machine.hpp"

namespace tilevit::target {

// The split LayerNorm's two kernels (moments of a part of each row; the parts combined and
// applied) and the GELU writing FP8 come after the original eight.
enum class Kernel {
  gemm, layernorm, gelu, softmax, reduce_add, add, cast_fp16_fp8, copy,
  layer_norm_moments, layer_norm_apply, gelu_f8out
};
enum class Precision { fp16, fp8 };

// The fitted cost formulas, one per kernel and mode: each is a sum of coefficient x term
// (formula_terms), the coefficients being [costs] keys (formula_keys) fitted to measurements
// of one kernel generation (cost_fit.hpp). The local copy is a stated rule, not a formula here.
enum class Formula {
  gemm_fp16, gemm_fp8, layernorm, softmax_whole, softmax_split, gelu, add, reduce_add, cast_fp16_fp8,
  layer_norm_moments, layer_norm_apply, gelu_f8out
};
std::span<const Formula> all_formulas();
std::string_view to_string(Formula formula);
// The formula's dims: gemm rows, inner, columns | layernorm rows, width | softmax rows, keys |
// gelu, add, cast, layer_norm_moments, layer_norm_apply, gelu_f8out elements | reduce_add
// elements, partials.
std::span<const std::string_view> formula_dims(Formula formula);
std::span<const std::string_view> formula_keys(Formula formula);
std::vector<double> formula_terms(const MachineDescription& machine, Formula formula, std::span<const std::uint64_t> dims);
// Pointers to the formula's coefficients, in formula_keys order.
std::vector<double*> formula_coefficients(CostCoefficients& costs, Formula formula);
std::vector<double> formula_coefficients(const CostCoefficients& costs, Formula formula);
std::uint64_t formula_cycles(const MachineDescription& machine, Formula formula, std::span<const std::uint64_t> dims);

// Softmax as the hardware runs it: whole rows dealt round robin to the workers, or every
// row split into softmax_split_segments segments dealt to the workers (split mode, with a
// per-row merge of the segments' maxima and sums). A call runs the cheaper mode.
enum class SoftmaxMode { whole_rows, split_rows };
std::string_view to_string(SoftmaxMode mode);
SoftmaxMode softmax_mode(const MachineDescription& machine, std::uint64_t rows, std::uint64_t keys);
Formula softmax_formula(SoftmaxMode mode);

std::string_view to_string(Kernel kernel);
std::string_view to_string(Precision precision);
std::optional<Kernel> kernel_from_string(std::string_view name);
std::optional<Precision> precision_from_string(std::string_view name);
std::span<const Kernel> all_kernels();

// The kernel's extents, in the order KernelCall::dims holds them:
// gemm rows, inner, columns | layernorm rows, width | gelu elements | softmax rows, keys |
// reduce_add elements, partials | add elements | cast_fp16_fp8 elements | copy bytes |
// layer_norm_moments, layer_norm_apply, gelu_f8out elements.
std::span<const std::string_view> dim_names(Kernel kernel);

struct KernelCall {
  Kernel kernel = Kernel::gemm;
  Precision precision = Precision::fp16;  // gemm only
  std::vector<std::uint64_t> dims;        // dim_names(kernel).size() values
  bool operator==(const KernelCall&) const = default;
};

// "fp16 184x288x48" for a gemm, else "rows=1 width=1152".
std::string describe(const KernelCall& call);

// Whether the machine's coefficients for a formula are a fit to measurements of the
// machine's kernel generation: the machine names a generation and the embedded measurement
// catalog has fitted points of the formula in it (docs/COST_MODEL.md). Cycles of a kernel
// that is not are reported as uncalibrated. A kernel is calibrated when all its formulas
// are (both GEMM precisions, both softmax modes); the copy never is.
bool formula_calibrated(const MachineDescription& machine, Formula formula);
bool kernel_calibrated(const MachineDescription& machine, Kernel kernel);

// Dispatches on call.kernel; throws Error when dims has the wrong length.
std::uint64_t predict_cycles(const MachineDescription& machine, const KernelCall& call);

std::uint64_t gemm_cycles(const MachineDescription& machine, Precision precision, std::uint64_t rows,
                          std::uint64_t inner, std::uint64_t columns);
std::uint64_t layernorm_cycles(const MachineDescription& machine, std::uint64_t rows, std::uint64_t width);
std::uint64_t gelu_cycles(const MachineDescription& machine, std::uint64_t elements);
// The cheaper of the two modes (softmax_mode).
std::uint64_t softmax_cycles(const MachineDescription& machine, std::uint64_t rows, std::uint64_t keys);
std::uint64_t reduce_add_cycles(const MachineDescription& machine, std::uint64_t elements, std::uint64_t partials);
std::uint64_t add_cycles(const MachineDescription& machine, std::uint64_t elements);
std::uint64_t cast_fp16_fp8_cycles(const MachineDescription& machine, std::uint64_t elements);
std::uint64_t copy_cycles(const MachineDescription& machine, std::uint64_t bytes);
// The split LayerNorm's parts and the FP8-output GELU, per element of the call (the
// workers take whole grains of the block, rows one after another).
std::uint64_t layer_norm_moments_cycles(const MachineDescription& machine, std::uint64_t elements);
std::uint64_t layer_norm_apply_cycles(const MachineDescription& machine, std::uint64_t elements);
std::uint64_t gelu_f8out_cycles(const MachineDescription& machine, std::uint64_t elements);

// Elements handled by the busiest worker when `elements` are dealt to `workers` workers in
// grains of `grain` (the remainder forms one partial grain): non-decreasing in `elements`.
std::uint64_t busiest_worker_elements(std::uint64_t elements, std::uint32_t workers, std::uint32_t grain);
// busiest_worker_elements rounded up to whole vectors of costs.vector_elements.
std::uint64_t worker_vectors(const MachineDescription& machine, std::uint64_t elements);

}  // namespace tilevit::target
