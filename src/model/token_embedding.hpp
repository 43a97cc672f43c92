#pragma once
// The token sequence as the compiled program builds it (compiler/graph.hpp): with a
// class token the device's input holds a zero row where each class or register token
// goes, the patch GEMM has no bias, and one addend per token is added to its output:
//   class token   class_token + position[0]
//   register i    registers[i]                     (no position)
//   patch j       position[class + j] + patch bias
// so GEMM output + addend is the token row of the published definitions (a zero row
// times any weight is 0). Both the device and the device-numerics reference use these.
#include <vector>

#include "model/weights.hpp"

namespace tilevit::model {

// One image's device input rows [tokens][patch_dim]: patch_rows(config, chw) with the
// zero rows inserted (SigLIP, without a class token: the patch rows as they are).
std::vector<float> token_input_rows(const ViTConfig& config, const std::vector<float>& chw);
// [tokens][width] in FP32 (rounded to FP16 when uploaded); needs a class token.
std::vector<float> token_addend(const ViTWeights& weights);

}  // namespace tilevit::model
