#pragma once
// Every kernel kind described once, in the spirit of MLIR's op definitions: its name, its
// named dims, its typed operand signature, its cycle cost, FLOPs and code bytes. The
// lowering builds calls from it, the verifier checks every call against it, the package
// codec bounds the kind with it, the profile and statistics read cost and FLOPs from it,
// and the device model's executors are indexed by the same kinds (device/kernels.cpp).
// The arithmetic each kind performs is defined in numerics/device_kernels.hpp.
#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "compiler/graph.hpp"
#include "compiler/placement.hpp"
#include "target/machine.hpp"

namespace tilevit::compiler {

enum class KernelKind : std::uint8_t {
  gemm_fp8,           // C[rows,cols] f16 = A[rows,inner] f143 x B[inner,cols] f143, FP16 accumulator per K32 panel
  gemm_fp16,          // C[rows,cols] f16 = A[rows,inner] f16 x B[inner,cols] f16, FP32 accumulation
  reduce_add,         // out[count] f16 = fp16(sum_p partial_p) in FP32, p ascending
  bias_add,           // out[rows,cols] = fp16(in + bias[col])
  add,                // out[count] = fp16(a + b)
  layernorm,          // rows x width, FP32 statistics, gamma/beta f16
  gelu,               // tanh form, f16 -> f16
  cast_fp8,           // f16 -> f143 at `scale`
  attention_scores,   // key-major scores (Q K^T) * scale of one head's query and key blocks, + row maxima
  attention_values,   // with every block's maxima: p = fp16(exp(s - max)), partial {P.V, sum} per row
  attention_combine,  // key blocks' partials summed in block order -> fp16(o / l)
  // The other families' kernels (CLIP, DINOv2, ViT), after SigLIP's so their numbers stay.
  gelu_erf,           // exact (erf) GELU, f16 -> f16
  quick_gelu,         // x * sigmoid(1.702 x), f16 -> f16
  scale_columns,      // out[rows,cols] = fp16(in * scale[col]): LayerScale
  // FP8 attention products (a plan choice), after the others so their numbers stay.
  attention_scores_fp8,  // attention_scores on F143 Q, K (scale S) on the FP8 matrix unit: FP16 accumulator per K32 panel
  attention_values_fp8,  // attention_values with p cast to F143 and P.V on the FP8 matrix unit (V F143 at scale S)
  // The LayerNorm split over a row's column parts and the FP8-output GELU (docs/NUMERICS.md).
  layer_norm_moments,  // per row of a column part: {mean, M2} in FP32
  layer_norm_apply,    // the row's parts' moments combined in part order, then normalise, scale, shift
  gelu_f8,             // tanh GELU, f16 -> f143 at `scale`: exactly gelu then cast_fp8
};
inline constexpr std::size_t kKernelKinds = 19;

// The extents a kernel kind is parameterised by. A call stores the values of its kind's
// dims in KernelKindInfo::dims order (KernelDims); everything else reads them by name.
enum class Dim : std::uint8_t { rows, inner, cols, count, partials, width, queries, keys, head_dim, key_blocks, part_width };
std::string_view to_string(Dim dim);

inline constexpr std::size_t kMaxKernelDims = 4;
using KernelDims = std::array<std::uint32_t, kMaxKernelDims>;

inline constexpr std::size_t kMaxKernelOperands = 5;
struct KernelKindInfo;

// A call's dims read by name.
class KernelShape {
 public:
  KernelShape(KernelKind kind, const KernelDims& dims);
  // Throws Error(kExitInternal) when the kind has no such dim (a compiler bug).
  std::uint64_t operator[](Dim dim) const;
  const KernelKindInfo& info() const { return *info_; }

 private:
  const KernelKindInfo* info_;
  KernelDims dims_;
};

enum class OperandRole : std::uint8_t { input, output };

struct OperandSpec {
  const char* name;
  OperandRole role;
  DType dtype;
  RegionNeed region;                              // where the kernel needs the operand
  std::uint64_t (*elements)(const KernelShape&);  // as a function of the call's dims
};

struct KernelKindInfo {
  KernelKind kind;
  const char* name;
  std::array<Dim, kMaxKernelDims> dim_slots;
  std::size_t dim_count;
  std::array<OperandSpec, kMaxKernelOperands> operand_slots;  // inputs in kernel order, then the outputs
  std::size_t operand_count;
  // Modelled cycles of one call on one tile (target/kernel_costs.hpp; launch included).
  std::uint64_t (*cycles)(const target::MachineDescription&, const KernelShape&);
  // The part of `cycles` that no measurement of the machine's kernel generation covers
  // (derived terms, written down in docs/FIDELITY.md); 0 when the whole call is calibrated.
  std::uint64_t (*uncalibrated_cycles)(const target::MachineDescription&, const KernelShape&);
  // Matrix products count 2 FLOPs per multiply-add; other kernels one per output element
  // per arithmetic operation of their definition (docs/PROFILE_FORMAT.md).
  std::uint64_t (*flops)(const KernelShape&);
  std::uint32_t code_bytes;  // tile code of the kernel (docs/COMPILER.md)

  std::span<const Dim> dims() const { return {dim_slots.data(), dim_count}; }
  std::span<const OperandSpec> operands() const { return {operand_slots.data(), operand_count}; }
  std::size_t first_output() const;
  std::uint64_t operand_bytes(std::size_t operand, const KernelShape& shape) const;
};

// The table, indexed by kind (checked at compile time: one entry per kind, in order).
std::span<const KernelKindInfo> kernel_table();
const KernelKindInfo& kernel_info(KernelKind kind);
const char* kernel_name(KernelKind kind);

// A call's dims from named values: every dim of the kind exactly once (else Error(kExitInternal)).
KernelDims make_dims(KernelKind kind, std::initializer_list<std::pair<Dim, std::uint32_t>> values);
// The kind's dims joined by 'x', e.g. "81x192x160".
std::string dims_text(KernelKind kind, const KernelDims& dims);

}  // namespace tilevit::compiler
