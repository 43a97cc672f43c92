#pragma once
// Image tensor -> patch rows: CHW [3][S][S] normalised pixels to [patches][patch_dim]
// with each row in (y, x, channel) order, the layout the patch embedding GEMM reads.
#include <vector>

#include "model/config.hpp"

namespace tilevit::model {

std::vector<float> patch_rows(const ViTConfig& config, const std::vector<float>& chw);

}  // namespace tilevit::model
