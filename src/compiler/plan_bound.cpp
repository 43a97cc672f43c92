#include "compiler/plan_bound.hpp"

#include <algorithm>

#include "target/kernel_costs.hpp"

namespace tilevit::compiler {
namespace {

// Work of one execution of `op`, in tile-cycles: matrix and vector parts.
struct OpWork {
  double matrix = 0, vector = 0;
};

double matrix_cycles(const target::MachineDescription& m, bool fp8, double flops) {
  const std::uint32_t peak = fp8 ? m.flop_per_cycle_fp8 : m.flop_per_cycle_fp16;
  return peak == 0 ? 0 : flops / peak;
}

// A vector kernel's cost of `n` items less its cost of none: the per-item work only.
template <typename Cost>
double marginal(Cost cost, std::uint64_t n) {
  return static_cast<double>(cost(n)) - static_cast<double>(cost(0));
}

OpWork op_work(const Graph& g, const target::MachineDescription& m, const Op& op) {
  OpWork w;
  const Tensor& out = g.tensor(op.output);
  const std::uint64_t elements = std::uint64_t(out.rows) * out.cols;
  switch (op.kind) {
    case OpKind::gemm: {
      const Tensor& a = g.tensor(op.inputs[0]);
      const Tensor& b = g.tensor(op.inputs[1]);
      w.matrix = matrix_cycles(m, g.numerics.role(op.role).fp8, 2.0 * a.rows * b.rows * b.cols);
      break;
    }
    case OpKind::attention: {
      const std::uint32_t images = std::max(1u, op.images);
      const std::uint64_t queries = op.shared_query ? g.tensor(op.inputs[0]).rows : g.tensor(op.inputs[0]).rows / images;
      const std::uint64_t keys = g.tensor(op.inputs[1]).rows / images;
      const std::uint64_t rows = queries * op.heads * images;  // score rows
      // QK^T and P.V: 2 x rows x keys x head_dim multiply-adds each, FP16 today.
      w.matrix = matrix_cycles(m, false, 4.0 * rows * keys * op.head_dim);
      w.vector = marginal([&](std::uint64_t r) { return target::softmax_cycles(m, r, keys); }, rows);
      break;
    }
    case OpKind::layernorm: {
      // Whole rows, or split over column parts (moments + apply of every element).
      const double rows = marginal([&](std::uint64_t r) { return target::layernorm_cycles(m, r, out.cols); }, out.rows);
      const double split = marginal([&](std::uint64_t n) { return target::layer_norm_moments_cycles(m, n); }, elements) +
                           marginal([&](std::uint64_t n) { return target::layer_norm_apply_cycles(m, n); }, elements);
      w.vector = std::min(rows, split);
      break;
    }
    case OpKind::gelu: {
      // A tanh GELU may write FP8 in place of its cast: then it costs the fused kernel less
      // the cast the bound counts at the cast op.
      w.vector = marginal([&](std::uint64_t n) { return target::gelu_cycles(m, n); }, elements);
      if (op.activation == model::Activation::gelu_tanh)
        w.vector = std::min(w.vector, marginal([&](std::uint64_t n) { return target::gelu_f8out_cycles(m, n); }, elements) -
                                          marginal([&](std::uint64_t n) { return target::cast_fp16_fp8_cycles(m, n); }, elements));
      w.vector = std::max(w.vector, 0.0);
      break;
    }
    case OpKind::take_rows: break;  // data movement only
    case OpKind::bias_add:
    case OpKind::scale_columns:
    case OpKind::add: w.vector = marginal([&](std::uint64_t n) { return target::add_cycles(m, n); }, elements); break;
    case OpKind::cast_fp8:
      w.vector = marginal([&](std::uint64_t n) { return target::cast_fp16_fp8_cycles(m, n); }, elements);
      break;
  }
  return w;
}

}  // namespace

LowerBound plan_lower_bound(const Graph& graph, const target::MachineDescription& machine) {
  double matrix = 0, vector = 0;
  auto add = [&](const std::vector<Op>& ops, std::uint32_t executions) {
    for (const Op& op : ops) {
      const OpWork w = op_work(graph, machine, op);
      matrix += w.matrix * executions;
      vector += w.vector * executions;
    }
  };
  add(graph.prologue, 1);
  add(graph.body, std::max(1u, graph.loop_count));
  add(graph.epilogue, 1);
  const double tiles = std::max(1u, machine.tiles);
  LowerBound b;
  b.matrix_cycles = static_cast<std::uint64_t>(matrix / tiles);
  b.vector_cycles = static_cast<std::uint64_t>(vector / tiles);
  b.cycles = b.matrix_cycles + b.vector_cycles;
  return b;
}

std::vector<OperationBound> operation_lower_bounds(const Graph& graph, const target::MachineDescription& machine) {
  std::vector<OperationBound> out;
  for (const auto* ops : {&graph.prologue, &graph.body, &graph.epilogue})
    for (const Op& op : *ops) {
      const OpWork w = op_work(graph, machine, op);
      const double executions = ops == &graph.body ? std::max(1u, graph.loop_count) : 1;
      out.push_back(OperationBound{op.name, (w.matrix + w.vector) * executions});
    }
  return out;
}

}  // namespace tilevit::compiler
