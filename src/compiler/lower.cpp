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
}

}  // namespace

void lower_gemm(LoweringContext& cx, const Op& op);
void lower_attention(LoweringContext& cx, const Op& op);
void lower_elementwise(LoweringContext& cx, const Op& op);
void lower_layernorm(LoweringContext& cx, const Op& op);
void lower_take_rows(LoweringContext& cx, const Op& op);

Lowered lower(const Graph& graph, const target::MachineDescription& machine, const LoweringOptions& options) {
  check_pins_name_ops(graph, options.pins);
  LoweringContext cx(graph, machine, options);
  cx.place_input();
  auto run = [&](const std::vector<Op>& ops) {
    for (const Op& op : ops) {
      cx.begin_op(op.name);
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
