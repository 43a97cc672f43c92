#pragma once
// Resizing a learned position table to another patch grid, as torch.nn.functional.interpolate
// (mode "bicubic", align_corners False, given output size) does it for DINOv2: plain
// (Keys' cubic with a = -0.75, four taps, edge-clamped) or antialiased (Pillow-style
// a = -0.5 kernel widened by the reduction factor, weights normalised), separable.
#include <vector>

#include "model/config.hpp"

namespace tilevit::model {

// `table` is [in_grid * in_grid][width] (row-major grid); returns [out_grid * out_grid][width].
std::vector<float> resize_position_grid(const std::vector<float>& table, int in_grid, int out_grid, int width,
                                        PositionResize mode);

}  // namespace tilevit::model
