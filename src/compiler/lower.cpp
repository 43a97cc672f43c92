// Graph -> supersteps. One Lowering object walks prologue, loop body and epilogue in
// order; each op gathers its inputs (an exchange phase closing the current superstep
// when anything has to move) and appends its kernel calls to the current compute phase.
#include "compiler/lower.hpp"

#include "compiler/levers.hpp"
#include "compiler/lowering_context.hpp"
#include "support/error.hpp"

namespace tilevit::compiler {
void lower_gemm(LoweringContext& cx, const Op& op);
void lower_attention(LoweringContext& cx, const Op& op);
void lower_elementwise(LoweringContext& cx, const Op& op);
void lower_layernorm(LoweringContext& cx, const Op& op);
void lower_take_rows(LoweringContext& cx, const Op& op);
bool fuses_gelu_cast(LoweringContext& cx, const Op& gelu, const Op* next);
void lower_gelu_fp8(LoweringContext& cx, const Op& gelu, const Op& cast);

Lowered lower(const Graph& graph, const target::MachineDescription& machine, const CompileOptions& options) {
  check_pins_name_ops(graph, options.plan);
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
