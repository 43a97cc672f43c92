// LayerNorm lowering: whole rows gathered onto row tiles, or split over the column parts
// its input already has (PlanPins::split_norms); and the GELU with FP8 output in place
// of a GELU and its cast (PlanPins::fp8_output_gelus).
#include <algorithm>
#include <map>

#include "compiler/lowering_context.hpp"
#include "support/error.hpp"

namespace tilevit::compiler {
namespace {

// Rows gathered to one tile each; scale and bias multicast into a copy on every row tile.
void lower_whole_rows(LoweringContext& cx, const Op& op) {
  const Distribution& in = cx.dist(op.inputs[0]);
  const Distribution rows = cx.row_split(in.rows, in.cols, DType::f16);
  const Distribution x = cx.gather(op.inputs[0], rows, op.name + ".in");
  std::vector<std::pair<std::uint32_t, std::uint32_t>> gammas, betas;
  for (const Block& b : x.blocks) {
    gammas.emplace_back(b.tile, cx.allocate(b.tile, op.name + ".scale.copy", AllocationKind::scratch, in.cols * 2, RegionNeed::any));
    betas.emplace_back(b.tile, cx.allocate(b.tile, op.name + ".bias.copy", AllocationKind::scratch, in.cols * 2, RegionNeed::any));
  }
  cx.broadcast_vector(op.inputs[1], gammas);
  cx.broadcast_vector(op.inputs[2], betas);
  Distribution out = cx.allocate_like(rows, op.name + ".out", DType::f16);
  for (std::size_t i = 0; i < x.blocks.size(); ++i) {
    const Block& b = x.blocks[i];
    KernelCall k = kernel_call(KernelKind::layernorm, b.tile, {{Dim::rows, b.rows}, {Dim::width, b.cols}},
                               {whole_block(cx, b, DType::f16), cx.operand(gammas[i].second, 0, b.cols * 2),
                                cx.operand(betas[i].second, 0, b.cols * 2), whole_block(cx, out.blocks[i], DType::f16)});
    k.param = op.eps;
    cx.add_call(std::move(k));
  }
  cx.set_dist(op.output, std::move(out));
}

// The input's blocks by row range, each range's blocks in column order: the split needs
// every range cut into the same column parts of `part` columns (the last may be shorter).
// Returns the part width, or throws a usage error naming the op.
std::uint32_t column_parts(const Op& op, const Distribution& in,
                           std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::size_t>>& groups) {
  const auto fail = [&](const std::string& why) {
    throw RefusedPin("split LayerNorm " + op.name + ": its input's blocks " + why);
  };
  if (in.blocks.empty()) fail("are empty");
  // Whole rows are one part each: the split's arithmetic is then the whole-row LayerNorm's.
  const std::uint32_t part = in.blocks[0].cols;
  const std::uint32_t parts = (in.cols + part - 1) / part;
  for (std::size_t i = 0; i < in.blocks.size(); ++i) {
    const Block& b = in.blocks[i];
    if (b.col0 % part != 0 || b.cols != std::min(part, in.cols - b.col0))
      fail("are not column parts of " + std::to_string(part));
    groups[{b.row0, b.rows}].push_back(i);
  }
  for (auto& [rows, members] : groups) {
    std::sort(members.begin(), members.end(), [&](std::size_t a, std::size_t b) {
      return in.blocks[a].col0 < in.blocks[b].col0;
    });
    if (members.size() != parts) fail("do not cut every row range into the same " + std::to_string(parts) + " parts");
    for (std::uint32_t p = 0; p < parts; ++p)
      if (in.blocks[members[p]].col0 != p * part) fail("repeat or miss a column part");
  }
  return part;
}

// Moments of every block; the parts' moments all-gathered within each row range; then
// each block combines them in part order and normalises its part into a new block.
void lower_split(LoweringContext& cx, const Op& op) {
  const Distribution in = cx.dist(op.inputs[0]);
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::size_t>> groups;
  const std::uint32_t part = column_parts(op, in, groups);
  const std::uint32_t parts = (in.cols + part - 1) / part;
  cx.record_norm_part(op.name, op.norm_use, part);
  std::vector<std::uint32_t> moments(in.blocks.size()), gathered(in.blocks.size());
  for (std::size_t i = 0; i < in.blocks.size(); ++i) {
    const Block& b = in.blocks[i];
    moments[i] = cx.allocate(b.tile, op.name + ".moments", AllocationKind::scratch, b.rows * 8, RegionNeed::any);
    cx.add_call(kernel_call(KernelKind::layer_norm_moments, b.tile, {{Dim::rows, b.rows}, {Dim::cols, b.cols}},
                            {whole_block(cx, b, DType::f16), cx.operand(moments[i], 0, b.rows * 8)}));
  }
  std::vector<Transfer> moves;
  for (const auto& [range, members] : groups) {
    for (std::size_t i : members)
      gathered[i] = cx.allocate(in.blocks[i].tile, op.name + ".parts", AllocationKind::scratch, parts * range.second * 8,
                                RegionNeed::any);
    for (std::uint32_t p = 0; p < parts; ++p) {
      Transfer t;
      t.source = Endpoint{in.blocks[members[p]].tile, moments[members[p]], 0};
      t.bytes = range.second * 8;
      for (std::size_t i : members) t.destinations.push_back(Endpoint{in.blocks[i].tile, gathered[i], p * range.second * 8});
      moves.push_back(std::move(t));
    }
  }
  cx.add_transfers(std::move(moves));
  Distribution out = cx.allocate_like(in, op.name + ".out", DType::f16);
  for (std::size_t i = 0; i < in.blocks.size(); ++i) {
    const Block& b = in.blocks[i];
    std::uint32_t gamma_stride = 0, beta_stride = 0;
    const std::uint32_t gamma = cx.resident_weight(op.inputs[1], b.tile, 0, 1, b.col0, b.cols, RegionNeed::any, &gamma_stride);
    const std::uint32_t beta = cx.resident_weight(op.inputs[2], b.tile, 0, 1, b.col0, b.cols, RegionNeed::any, &beta_stride);
    KernelCall k = kernel_call(KernelKind::layer_norm_apply, b.tile,
                               {{Dim::rows, b.rows}, {Dim::cols, b.cols}, {Dim::width, in.cols}, {Dim::part_width, part}},
                               {whole_block(cx, b, DType::f16), cx.operand(gathered[i], 0, parts * b.rows * 8),
                                cx.operand(gamma, 0, b.cols * 2, gamma_stride), cx.operand(beta, 0, b.cols * 2, beta_stride),
                                whole_block(cx, out.blocks[i], DType::f16)});
    k.param = op.eps;
    cx.add_call(std::move(k));
  }
  cx.set_dist(op.output, std::move(out));
}

}  // namespace

void lower_layernorm(LoweringContext& cx, const Op& op) {
  if (!cx.options.plan.pins.split_norms.count(op.name)) return lower_whole_rows(cx, op);
  if (op.norm_use == NormUse::other)
    throw RefusedPin("split LayerNorm " + op.name + ": only the encoder layer's LayerNorms can be split");
  lower_split(cx, op);
}

bool fuses_gelu_cast(LoweringContext& cx, const Op& gelu, const Op* next) {
  if (!cx.options.plan.pins.fp8_output_gelus.count(gelu.name)) return false;
  if (gelu.activation != model::Activation::gelu_tanh || next == nullptr || next->kind != OpKind::cast_fp8 ||
      next->inputs[0] != gelu.output)
    throw RefusedPin("FP8-output GELU " + gelu.name + ": only a tanh GELU followed by its FP8 cast has one");
  return true;
}

// gelu_f8 on the GELU's input blocks into the cast's FP8 blocks, on the same tiles.
void lower_gelu_fp8(LoweringContext& cx, const Op& gelu, const Op& cast) {
  cx.record_fp8_output_gelu(gelu.name);
  lower_fp8_output(cx, cx.dist(gelu.inputs[0]), KernelKind::gelu_f8, cast);
}

}  // namespace tilevit::compiler
