#pragma once
// The [costs] keys of the machine file and the members they fill, in canonical order:
// one table shared by the text reader/writer (machine.cpp) and the JSON form
// (machine_json.cpp), so the two can never disagree on a name.
#include <string_view>

#include "target/machine.hpp"

namespace tilevit::target::detail {

// Coefficients stored as plain doubles.
struct NumberKey {
  std::string_view name;
  double CostCoefficients::*member;
};
inline constexpr NumberKey kCostNumbers[] = {
    {"layernorm_base", &CostCoefficients::layernorm_base},
    {"layernorm_per_row", &CostCoefficients::layernorm_per_row},
    {"layernorm_per_row_vector", &CostCoefficients::layernorm_per_row_vector},
    {"softmax_whole_base", &CostCoefficients::softmax_whole_base},
    {"softmax_whole_per_row_vector", &CostCoefficients::softmax_whole_per_row_vector},
    {"softmax_split_base", &CostCoefficients::softmax_split_base},
    {"softmax_split_per_row", &CostCoefficients::softmax_split_per_row},
    {"softmax_split_per_segment_vector", &CostCoefficients::softmax_split_per_segment_vector},
    {"gelu_base", &CostCoefficients::gelu_base},
    {"gelu_per_vector", &CostCoefficients::gelu_per_vector},
    {"reduce_add_base", &CostCoefficients::reduce_add_base},
    {"reduce_add_per_vector", &CostCoefficients::reduce_add_per_vector},
    {"reduce_add_per_vector_partial", &CostCoefficients::reduce_add_per_vector_partial},
    {"add_base", &CostCoefficients::add_base},
    {"add_per_vector", &CostCoefficients::add_per_vector},
    {"cast_fp16_fp8_base", &CostCoefficients::cast_base},
    {"cast_fp16_fp8_per_vector", &CostCoefficients::cast_per_vector},
    {"layer_norm_moments_base", &CostCoefficients::layer_norm_moments_base},
    {"layer_norm_moments_per_vector", &CostCoefficients::layer_norm_moments_per_vector},
    {"layer_norm_apply_base", &CostCoefficients::layer_norm_apply_base},
    {"layer_norm_apply_per_vector", &CostCoefficients::layer_norm_apply_per_vector},
    {"gelu_f8out_base", &CostCoefficients::gelu_f8out_base},
    {"gelu_f8out_per_vector", &CostCoefficients::gelu_f8out_per_vector},
    {"copy_base", &CostCoefficients::copy_base},
    {"copy_bytes_per_cycle", &CostCoefficients::copy_bytes_per_cycle},
};

struct GemmKey {
  std::string_view prefix;
  GemmCoefficients CostCoefficients::*member;
};
inline constexpr GemmKey kGemms[] = {{"gemm_fp16_", &CostCoefficients::gemm_fp16}, {"gemm_fp8_", &CostCoefficients::gemm_fp8}};

}  // namespace tilevit::target::detail
