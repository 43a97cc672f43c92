// Graph -> supersteps. One Lowering object walks prologue, loop body and epilogue in
// order; each op gathers its inputs (an exchange phase closing the current superstep
// when anything has to move) and appends its kernel calls to the current compute phase.
#include "compiler/lower.hpp"

#include "compiler/lowering_context.hpp"

namespace tilevit::compiler {

void lower_gemm(LoweringContext& cx, const Op& op);
void lower_attention(LoweringContext& cx, const Op& op);
void lower_elementwise(LoweringContext& cx, const Op& op);
void lower_layernorm(LoweringContext& cx, const Op& op);

Lowered lower(const Graph& graph, const target::MachineDescription& machine, const LoweringOptions& options) {
  LoweringContext cx(graph, machine, options);
  cx.place_input();
  auto run = [&](const std::vector<Op>& ops) {
    for (const Op& op : ops) {
      cx.begin_op(op.name);
      switch (op.kind) {
        case OpKind::gemm: lower_gemm(cx, op); break;
        case OpKind::attention: lower_attention(cx, op); break;
        case OpKind::layernorm: lower_layernorm(cx, op); break;
        case OpKind::cast_fp8:
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
