#include "compiler/kernel_table.hpp"

#include <algorithm>

#include "support/error.hpp"
#include "target/kernel_costs.hpp"

namespace tilevit::compiler {
namespace {

using target::MachineDescription;
using target::Precision;
using S = const KernelShape&;

constexpr OperandSpec in(const char* name, DType dtype, std::uint64_t (*elements)(S),
                         RegionNeed region = RegionNeed::any) {
  return {name, OperandRole::input, dtype, region, elements};
}
constexpr OperandSpec out(const char* name, DType dtype, std::uint64_t (*elements)(S)) {
  return {name, OperandRole::output, dtype, RegionNeed::any, elements};
}

// Element counts shared by several signatures.
std::uint64_t count(S s) { return s[Dim::count]; }
std::uint64_t rows_x_cols(S s) { return s[Dim::rows] * s[Dim::cols]; }
std::uint64_t rows_x_width(S s) { return s[Dim::rows] * s[Dim::width]; }
std::uint64_t width(S s) { return s[Dim::width]; }
std::uint64_t gemm_a(S s) { return s[Dim::rows] * s[Dim::inner]; }
std::uint64_t gemm_b(S s) { return s[Dim::inner] * s[Dim::cols]; }
std::uint64_t gemm_flops(S s) { return 2 * s[Dim::rows] * s[Dim::inner] * s[Dim::cols]; }

// Cycle costs, one function per kind (target/kernel_costs.hpp holds the formulas).
using Cost = std::uint64_t (*)(const MachineDescription&, S);
template <Precision P>
std::uint64_t gemm_cost(const MachineDescription& m, S s) {
  return target::gemm_cycles(m, P, s[Dim::rows], s[Dim::inner], s[Dim::cols]);
}
std::uint64_t reduce_add_cost(const MachineDescription& m, S s) {
  return target::reduce_add_cycles(m, s[Dim::count], s[Dim::partials]);
}
std::uint64_t bias_add_cost(const MachineDescription& m, S s) { return target::add_cycles(m, rows_x_cols(s)); }
std::uint64_t add_cost(const MachineDescription& m, S s) { return target::add_cycles(m, s[Dim::count]); }
std::uint64_t layernorm_cost(const MachineDescription& m, S s) {
  return target::layernorm_cycles(m, s[Dim::rows], s[Dim::width]);
}
std::uint64_t gelu_cost(const MachineDescription& m, S s) { return target::gelu_cycles(m, s[Dim::count]); }
std::uint64_t cast_cost(const MachineDescription& m, S s) { return target::cast_fp16_fp8_cycles(m, s[Dim::count]); }
// Attention's products are GEMMs of their precision (FP8: the calibrated FP8 GEMM, whose
// 2026-09-13 points include the original's FP8 QK^T and P.V shards).
template <Precision P>
std::uint64_t scores_cost(const MachineDescription& m, S s) {
  // QK^T only: the row maxima are the softmax's own first pass (the measured softmax
  // includes it), charged once, in attention_values.
  return target::gemm_cycles(m, P, s[Dim::queries], s[Dim::head_dim], s[Dim::keys]);
}
std::uint64_t values_softmax(const MachineDescription& m, S s) {
  return target::softmax_cycles(m, s[Dim::queries], s[Dim::keys]);
}
template <Precision P>
std::uint64_t values_gemm(const MachineDescription& m, S s) {
  return target::gemm_cycles(m, P, s[Dim::queries], s[Dim::keys], s[Dim::head_dim]);
}
// FP8: the FP16 probabilities cast to F143 by the cast kernel before the product.
std::uint64_t values_cast(const MachineDescription& m, S s) {
  return target::cast_fp16_fp8_cycles(m, s[Dim::queries] * s[Dim::keys]);
}
template <Precision P>
std::uint64_t values_cost(const MachineDescription& m, S s) {
  return values_softmax(m, s) + (P == Precision::fp8 ? values_cast(m, s) : 0) + values_gemm<P>(m, s);
}
// Summing the key blocks' partials and dividing by the row sums: no measurement; derived
// from the reduction and add kernels' rates.
std::uint64_t combine_cost(const MachineDescription& m, S s) {
  return target::reduce_add_cycles(m, s[Dim::rows] * (s[Dim::head_dim] + 1), s[Dim::key_blocks]) +
         target::add_cycles(m, s[Dim::rows] * s[Dim::head_dim]);
}

// The uncalibrated part of a call: all of it when the machine's coefficients for its
// formula are not a fit to measurements of the machine's kernel generation, else 0.
template <target::Kernel K, Cost C>
std::uint64_t unless_calibrated(const MachineDescription& m, S s) {
  return target::kernel_calibrated(m, K) ? 0 : C(m, s);
}
template <target::Formula F, Cost C>
std::uint64_t unless_formula_calibrated(const MachineDescription& m, S s) {
  return target::formula_calibrated(m, F) ? 0 : C(m, s);
}
constexpr target::Formula gemm_formula(Precision p) {
  return p == Precision::fp16 ? target::Formula::gemm_fp16 : target::Formula::gemm_fp8;
}
template <Precision P>
std::uint64_t values_uncalibrated(const MachineDescription& m, S s) {
  // The softmax counts as calibrated when the mode the call runs in is.
  const target::Formula mode = target::softmax_formula(target::softmax_mode(m, s[Dim::queries], s[Dim::keys]));
  const std::uint64_t cast = P == Precision::fp8 ? unless_calibrated<target::Kernel::cast_fp16_fp8, values_cast>(m, s) : 0;
  return (target::formula_calibrated(m, mode) ? 0 : values_softmax(m, s)) + cast +
         unless_formula_calibrated<gemm_formula(P), values_gemm<P>>(m, s);
}
std::uint64_t all_uncalibrated(const MachineDescription& m, S s) { return combine_cost(m, s); }

// The other families' element-wise kernels have no measurement. Their costs are the
// nearest measured kernel's at the same element count: the tanh GELU's for the erf GELU
// (two short polynomials and a divide against tanh's exp polynomial and divide) and for
// quick_gelu (one exp and a divide); the add's for the per-channel multiply (the same
// loads, one vector operation and a store per element, as bias_add). All uncalibrated.
std::uint64_t derived_gelu_cost(const MachineDescription& m, S s) { return target::gelu_cycles(m, s[Dim::count]); }
std::uint64_t derived_scale_cost(const MachineDescription& m, S s) { return target::add_cycles(m, rows_x_cols(s)); }
template <Cost C>
std::uint64_t wholly_uncalibrated(const MachineDescription& m, S s) { return C(m, s); }

// The split LayerNorm (lower_layernorm.cpp). Moments and apply are the measured kernels of
// one row part; combining P parts' moments in the apply has no measurement (the original
// measured "one part") and is charged at the reduction's rate over the rows' {mean, M2}
// pairs, uncalibrated.
std::uint64_t norm_parts(S s) { return (s[Dim::width] + s[Dim::part_width] - 1) / s[Dim::part_width]; }
std::uint64_t moments_cost(const MachineDescription& m, S s) {
  return target::layer_norm_moments_cycles(m, rows_x_cols(s));
}
std::uint64_t apply_combine(const MachineDescription& m, S s) {
  return norm_parts(s) > 1 ? target::reduce_add_cycles(m, 2 * s[Dim::rows], norm_parts(s)) : 0;
}
std::uint64_t apply_cost(const MachineDescription& m, S s) {
  return target::layer_norm_apply_cycles(m, rows_x_cols(s)) + apply_combine(m, s);
}
std::uint64_t apply_uncalibrated(const MachineDescription& m, S s) {
  return (target::kernel_calibrated(m, target::Kernel::layer_norm_apply) ? 0
                                                                          : target::layer_norm_apply_cycles(m, rows_x_cols(s))) +
         apply_combine(m, s);
}
std::uint64_t gelu_f8_cost(const MachineDescription& m, S s) { return target::gelu_f8out_cycles(m, s[Dim::count]); }
// The attention kinds of each precision differ in Q/K/V's type and their products' rate
// (and FP8's cast of p).
template <Precision P>
constexpr KernelKindInfo attention_scores(KernelKind kind, const char* name, DType operands) {
  return {kind, name, {Dim::queries, Dim::keys, Dim::head_dim}, 3,
          {in("Q", operands, [](S s) { return s[Dim::queries] * s[Dim::head_dim]; }),
           in("K", operands, [](S s) { return s[Dim::keys] * s[Dim::head_dim]; }),
           out("scores", DType::f32, [](S s) { return s[Dim::queries] * s[Dim::keys]; }),
           out("maxima", DType::f32, [](S s) { return s[Dim::queries]; })}, 4,
          scores_cost<P>, unless_formula_calibrated<gemm_formula(P), scores_cost<P>>,
          [](S s) { return 2 * s[Dim::queries] * s[Dim::keys] * s[Dim::head_dim] + s[Dim::queries] * s[Dim::keys]; }, 4096};
}
template <Precision P>
constexpr KernelKindInfo attention_values(KernelKind kind, const char* name, DType v) {
  return {kind, name, {Dim::queries, Dim::keys, Dim::head_dim, Dim::key_blocks}, 4,
          {in("scores", DType::f32, [](S s) { return s[Dim::queries] * s[Dim::keys]; }),
           in("maxima", DType::f32, [](S s) { return s[Dim::key_blocks] * s[Dim::queries]; }),
           in("V", v, [](S s) { return s[Dim::keys] * s[Dim::head_dim]; }),
           out("partial", DType::f32, [](S s) { return s[Dim::queries] * (s[Dim::head_dim] + 1); })}, 4,
          values_cost<P>, values_uncalibrated<P>,
          // exp, sum and rounding per score (and FP8's cast), then the product
          [](S s) {
            return 2 * s[Dim::queries] * s[Dim::keys] * s[Dim::head_dim] + (P == Precision::fp8 ? 4 : 3) * s[Dim::queries] * s[Dim::keys];
          },
          4096};
}

// The GEMM kinds differ only in operand type and matrix-unit rate.
template <Precision P>
constexpr KernelKindInfo gemm(KernelKind kind, const char* name, DType operands, std::uint32_t code_bytes) {
  return {kind,
          name,
          {Dim::rows, Dim::inner, Dim::cols},
          3,
          {in("A", operands, gemm_a, RegionNeed::interleaved), in("B", operands, gemm_b, RegionNeed::interleaved),
           out("C", DType::f16, rows_x_cols)},
          3,
          gemm_cost<P>,
          unless_formula_calibrated<gemm_formula(P), gemm_cost<P>>,
          gemm_flops,
          code_bytes};
}

constexpr std::array<KernelKindInfo, kKernelKinds> kTable = {{
    gemm<Precision::fp8>(KernelKind::gemm_fp8, "gemm_fp8", DType::f143, 6144),
    gemm<Precision::fp16>(KernelKind::gemm_fp16, "gemm_fp16", DType::f16, 4096),
    {KernelKind::reduce_add, "reduce_add", {Dim::count, Dim::partials}, 2,
     {in("partials", DType::f16, [](S s) { return s[Dim::count] * s[Dim::partials]; }), out("sum", DType::f16, count)}, 2,
     reduce_add_cost, unless_calibrated<target::Kernel::reduce_add, reduce_add_cost>,
     [](S s) { return s[Dim::count] * (s[Dim::partials] > 0 ? s[Dim::partials] - 1 : 0); }, 1024},
    {KernelKind::bias_add, "bias_add", {Dim::rows, Dim::cols}, 2,
     {in("in", DType::f16, rows_x_cols), in("bias", DType::f16, [](S s) { return s[Dim::cols]; }),
      out("out", DType::f16, rows_x_cols)}, 3,
     bias_add_cost, unless_calibrated<target::Kernel::add, bias_add_cost>, rows_x_cols, 1024},
    {KernelKind::add, "add", {Dim::count}, 1,
     {in("a", DType::f16, count), in("b", DType::f16, count), out("out", DType::f16, count)}, 3,
     add_cost, unless_calibrated<target::Kernel::add, add_cost>, count, 1024},
    {KernelKind::layernorm, "layernorm", {Dim::rows, Dim::width}, 2,
     {in("x", DType::f16, rows_x_width), in("gamma", DType::f16, width), in("beta", DType::f16, width),
      out("y", DType::f16, rows_x_width)}, 4,
     layernorm_cost, unless_calibrated<target::Kernel::layernorm, layernorm_cost>,
     // mean, variance, normalise, scale, shift
     [](S s) { return 8 * rows_x_width(s); }, 2048},
    {KernelKind::gelu, "gelu", {Dim::count}, 1, {in("x", DType::f16, count), out("y", DType::f16, count)}, 2,
     gelu_cost, unless_calibrated<target::Kernel::gelu, gelu_cost>,
     [](S s) { return 8 * s[Dim::count]; }, 1024},  // tanh form
    {KernelKind::cast_fp8, "cast_fp8", {Dim::count}, 1, {in("x", DType::f16, count), out("y", DType::f143, count)}, 2,
     cast_cost, unless_calibrated<target::Kernel::cast_fp16_fp8, cast_cost>, count, 1024},
    attention_scores<Precision::fp16>(KernelKind::attention_scores, "attention_scores", DType::f16),
    attention_values<Precision::fp16>(KernelKind::attention_values, "attention_values", DType::f16),
    {KernelKind::attention_combine, "attention_combine", {Dim::rows, Dim::head_dim, Dim::key_blocks}, 3,
     {in("partials", DType::f32, [](S s) { return s[Dim::key_blocks] * s[Dim::rows] * (s[Dim::head_dim] + 1); }),
      out("out", DType::f16, [](S s) { return s[Dim::rows] * s[Dim::head_dim]; })}, 2,
     combine_cost, all_uncalibrated,
     // the blocks' {P.V, sum} partials added, then o / l
     [](S s) {
       const std::uint64_t blocks = s[Dim::key_blocks];
       return s[Dim::rows] * (s[Dim::head_dim] + 1) * (blocks > 0 ? blocks - 1 : 0) + s[Dim::rows] * s[Dim::head_dim];
     },
     1024},
    {KernelKind::gelu_erf, "gelu_erf", {Dim::count}, 1, {in("x", DType::f16, count), out("y", DType::f16, count)}, 2,
     derived_gelu_cost, wholly_uncalibrated<derived_gelu_cost>,
     [](S s) { return 8 * s[Dim::count]; }, 1024},  // scale, erf's two polynomials and divide, 1 +, two products
    {KernelKind::quick_gelu, "quick_gelu", {Dim::count}, 1, {in("x", DType::f16, count), out("y", DType::f16, count)}, 2,
     derived_gelu_cost, wholly_uncalibrated<derived_gelu_cost>,
     [](S s) { return 4 * s[Dim::count]; }, 1024},  // product, exp, 1 +, divide
    {KernelKind::scale_columns, "scale_columns", {Dim::rows, Dim::cols}, 2,
     {in("in", DType::f16, rows_x_cols), in("scale", DType::f16, [](S s) { return s[Dim::cols]; }),
      out("out", DType::f16, rows_x_cols)}, 3,
     derived_scale_cost, wholly_uncalibrated<derived_scale_cost>, rows_x_cols, 1024},
    attention_scores<Precision::fp8>(KernelKind::attention_scores_fp8, "attention_scores_fp8", DType::f143),
    attention_values<Precision::fp8>(KernelKind::attention_values_fp8, "attention_values_fp8", DType::f143),
    {KernelKind::layer_norm_moments, "layer_norm_moments", {Dim::rows, Dim::cols}, 2,
     {in("x", DType::f16, rows_x_cols), out("moments", DType::f32, [](S s) { return 2 * s[Dim::rows]; })}, 2,
     moments_cost, unless_calibrated<target::Kernel::layer_norm_moments, moments_cost>,
     [](S s) { return 4 * rows_x_cols(s); }, 1024},  // sum, subtract, square, add
    {KernelKind::layer_norm_apply, "layer_norm_apply", {Dim::rows, Dim::cols, Dim::width, Dim::part_width}, 4,
     {in("x", DType::f16, rows_x_cols), in("moments", DType::f32, [](S s) { return 2 * norm_parts(s) * s[Dim::rows]; }),
      in("gamma", DType::f16, [](S s) { return s[Dim::cols]; }), in("beta", DType::f16, [](S s) { return s[Dim::cols]; }),
      out("y", DType::f16, rows_x_cols)}, 5,
     apply_cost, apply_uncalibrated,
     // per element normalise, scale, shift; per row and part Chan's update
     [](S s) { return 4 * rows_x_cols(s) + 8 * s[Dim::rows] * norm_parts(s); }, 1024},
    {KernelKind::gelu_f8, "gelu_f8", {Dim::count}, 1, {in("x", DType::f16, count), out("y", DType::f143, count)}, 2,
     gelu_f8_cost, unless_calibrated<target::Kernel::gelu_f8out, gelu_f8_cost>,
     [](S s) { return 9 * s[Dim::count]; }, 1024},  // tanh form, then the cast
}};

constexpr bool one_entry_per_kind_in_order() {
  for (std::size_t i = 0; i < kTable.size(); ++i)
    if (static_cast<std::size_t>(kTable[i].kind) != i || kTable[i].dim_count > kMaxKernelDims || kTable[i].operand_count > kMaxKernelOperands)
      return false;
  return true;
}
static_assert(one_entry_per_kind_in_order(), "kernel table: one entry per KernelKind, in enum order");
static_assert(static_cast<std::size_t>(KernelKind::gelu_f8) + 1 == kKernelKinds, "kKernelKinds");

}  // namespace

std::string_view to_string(Dim dim) {
  switch (dim) {
    case Dim::rows: return "rows";
    case Dim::inner: return "inner";
    case Dim::cols: return "cols";
    case Dim::count: return "count";
    case Dim::partials: return "partials";
    case Dim::width: return "width";
    case Dim::queries: return "queries";
    case Dim::keys: return "keys";
    case Dim::head_dim: return "head_dim";
    case Dim::key_blocks: return "key_blocks";
    case Dim::part_width: return "part_width";
  }
  return "?";
}

std::span<const KernelKindInfo> kernel_table() { return kTable; }

const KernelKindInfo& kernel_info(KernelKind kind) {
  const auto i = static_cast<std::size_t>(kind);
  if (i >= kTable.size()) throw Error("kernel kind " + std::to_string(i) + " is not a kernel kind", kExitInternal);
  return kTable[i];
}

const char* kernel_name(KernelKind kind) {
  const auto i = static_cast<std::size_t>(kind);
  return i < kTable.size() ? kTable[i].name : "?";
}

KernelShape::KernelShape(KernelKind kind, const KernelDims& dims) : info_(&kernel_info(kind)), dims_(dims) {}

std::uint64_t KernelShape::operator[](Dim dim) const {
  for (std::size_t i = 0; i < info_->dim_count; ++i)
    if (info_->dim_slots[i] == dim) return dims_[i];
  throw Error(std::string("kernel ") + info_->name + " has no dim " + std::string(to_string(dim)), kExitInternal);
}

std::size_t KernelKindInfo::first_output() const {
  std::size_t i = 0;
  while (i < operand_count && operand_slots[i].role == OperandRole::input) ++i;
  return i;
}

std::uint64_t KernelKindInfo::operand_bytes(std::size_t operand, const KernelShape& shape) const {
  const OperandSpec& spec = operand_slots.at(operand);
  return spec.elements(shape) * dtype_bytes(spec.dtype);
}

KernelDims make_dims(KernelKind kind, std::initializer_list<std::pair<Dim, std::uint32_t>> values) {
  const KernelKindInfo& info = kernel_info(kind);
  KernelDims dims{};
  std::array<bool, kMaxKernelDims> given{};
  for (const auto& [dim, value] : values) {
    const auto slot = std::find(info.dim_slots.begin(), info.dim_slots.begin() + info.dim_count, dim);
    const auto i = static_cast<std::size_t>(slot - info.dim_slots.begin());
    if (i == info.dim_count || given[i])
      throw Error(std::string("kernel ") + info.name + ": dim " + std::string(to_string(dim)) + " not of the kind or given twice",
                  kExitInternal);
    dims[i] = value;
    given[i] = true;
  }
  if (std::count(given.begin(), given.begin() + info.dim_count, true) != static_cast<long>(info.dim_count))
    throw Error(std::string("kernel ") + info.name + ": a dim is missing", kExitInternal);
  return dims;
}

std::string dims_text(KernelKind kind, const KernelDims& dims) {
  std::string s;
  for (std::size_t i = 0; i < kernel_info(kind).dim_count; ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return s;
}

}  // namespace tilevit::compiler
