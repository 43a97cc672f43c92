#include "compiler/program.hpp"

namespace tilevit::compiler {

const char* kernel_name(KernelKind kind) {
  switch (kind) {
    case KernelKind::gemm_fp8: return "gemm_fp8";
    case KernelKind::gemm_fp16: return "gemm_fp16";
    case KernelKind::reduce_add: return "reduce_add";
    case KernelKind::bias_add: return "bias_add";
    case KernelKind::add: return "add";
    case KernelKind::layernorm: return "layernorm";
    case KernelKind::gelu: return "gelu";
    case KernelKind::cast_fp8: return "cast_fp8";
    case KernelKind::attention_scores: return "attention_scores";
    case KernelKind::attention_values: return "attention_values";
    case KernelKind::attention_combine: return "attention_combine";
  }
  return "?";
}

}  // namespace tilevit::compiler
