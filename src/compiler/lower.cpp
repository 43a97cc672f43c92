// Graph -> supersteps. One Lowering object walks prologue, loop body and epilogue in
// order; each op gathers its inputs (an exchange phase closing the current superstep
// when anything has to move) and appends its kernel calls to the current compute phase.
#include "compiler/lower.hpp"

#include "compiler/lowering_context.hpp"
#include "support/error.hpp"

namespace tilevit::compiler {
namespace {

// A pin naming no op of its kind (a typo, a renamed op) would silently change nothing.
void check_pins_name_ops(const Graph& graph, const PlanPins& pins) {
  auto has_op = [&](const std::string& name, OpKind kind) {
    for (const std::vector<Op>* ops : {&graph.prologue, &graph.body, &graph.epilogue})
      for (const Op& op : *ops)
        if (op.name == name && op.kind == kind) return true;
    return false;
  };
  for (const auto& pin : pins.gemm)
    if (!has_op(pin.first, OpKind::gemm))
      throw Error("compiler: pinned GEMM grid for op " + pin.first + ": the graph has no GEMM of that name", kExitUsage);
  for (const auto& pin : pins.tile_offsets)
    if (!has_op(pin.first, OpKind::gemm) && !has_op(pin.first, OpKind::attention))
      throw Error("compiler: pinned tile offset for op " + pin.first + ": the graph has no GEMM or attention of that name",
                  kExitUsage);
  for (const auto& pin : pins.attention)
    if (!has_op(pin.first, OpKind::attention))
      throw Error("compiler: pinned attention blocks for op " + pin.first + ": the graph has no attention of that name",
                  kExitUsage);
  for (const std::string& name : pins.fp8_attention)
    if (!has_op(name, OpKind::attention))
      throw Error("compiler: pinned FP8 attention for op " + name + ": the graph has no attention of that name", kExitUsage);
  for (const std::string& name : pins.split_norms)
    if (!has_op(name, OpKind::layernorm))
      throw Error("compiler: split LayerNorm " + name + ": the graph has no LayerNorm of that name", kExitUsage);
  for (const std::string& name : pins.fp8_output_gelus)
    if (!has_op(name, OpKind::gelu))
      throw Error("compiler: FP8-output GELU " + name + ": the graph has no GELU of that name", kExitUsage);
}

}  // namespace

void lower_gemm(LoweringContext& cx, const Op& op);
void lower_attention(LoweringContext& cx, const Op& op);
void lower_elementwise(LoweringContext& cx, const Op& op);
void lower_layernorm(LoweringContext& cx, const Op& op);
void lower_take_rows(LoweringContext& cx, const Op& op);
bool fuses_gelu_cast(LoweringContext& cx, const Op& gelu, const Op* next);
void lower_gelu_fp8(LoweringContext& cx, const Op& gelu, const Op& cast);

Lowered lower(const Graph& graph, const target::MachineDescription& machine, const LoweringOptions& options) {
  check_pins_name_ops(graph, options.pins);
  LoweringContext cx(graph, machine, options);
  cx.place_input();
  auto run = [&](const std::vector<Op>& ops) {
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      cx.begin_op(op.name);
      if (op.kind == OpKind::gelu && fuses_gelu_cast(cx, op, i + 1 < ops.size() ? &ops[i + 1] : nullptr)) {
        lower_gelu_fp8(cx, op, ops[++i]);  // the cast is part of the fused kernel
        continue;
      }
      switch (op.kind) {
        case OpKind::gemm: lower_gemm(cx, op); break;
        case OpKind::attention: lower_attention(cx, op); break;
        case OpKind::layernorm: lower_layernorm(cx, op); break;
        case OpKind::take_rows: lower_take_rows(cx, op); break;
        case OpKind::cast_fp8:
        case OpKind::scale_columns:
        case OpKind::bias_add:
        case OpKind::add:
        case OpKind::gelu: lower_elementwise(cx, op); break;
      }
    }
  };
  run(graph.prologue);
  cx.begin_loop();
  run(graph.body);
  cx.end_loop(graph.loop_count);
  run(graph.epilogue);
  return cx.finish();
}

}  // namespace tilevit::compiler
