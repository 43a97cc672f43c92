// Per-op lowering rules (the schedule): GEMM grids with reduce-scatter, element-wise
// work in place on the producer's blocks, LayerNorm on whole rows, attention by head and
// query block.
#include <algorithm>
#include <cmath>

#include "compiler/gemm_plan.hpp"
#include "compiler/lowering_context.hpp"
#include "support/error.hpp"

namespace tilevit::compiler {
namespace {

std::uint32_t ceil_div(std::uint32_t a, std::uint32_t b) { return (a + b - 1) / b; }

KernelCall call(KernelKind kind, std::uint32_t tile, std::array<std::uint32_t, 4> dims, std::vector<Operand> operands) {
  KernelCall c;
  c.kind = kind;
  c.tile = tile;
  c.dims = dims;
  c.operands = std::move(operands);
  return c;
}

Operand whole(LoweringContext& cx, const Block& b, DType dtype, std::uint32_t stride = 0) {
  return cx.operand(b.allocation, b.offset, b.rows * b.cols * dtype_bytes(dtype), stride);
}

}  // namespace

void lower_gemm(LoweringContext& cx, const Op& op) {
  const Graph& g = cx.graph;
  const int a_id = op.inputs[0], w_id = op.inputs[1];
  const Distribution& a = cx.dist(a_id);
  const Tensor& w = g.tensor(w_id);
  const bool fp8 = g.numerics.role(op.role).fp8;
  const GemmShape shape{a.rows, w.rows, w.cols, fp8};
  const std::uint32_t tiles = cx.tiles();
  // Use most of the chip so every weight byte has a home tile; relax if no grid that wide exists.
  GemmGrid grid;
  for (std::uint32_t min_tiles = tiles - tiles / 4;; min_tiles /= 2) {
    try {
      grid = choose_gemm_grid(cx.machine, shape, tiles, min_tiles);
      break;
    } catch (const Error&) {
      if (min_tiles <= 1) throw;
    }
  }
  const std::uint32_t esize = fp8 ? 1 : 2;

  struct Cell {
    std::uint32_t tile, k0, kw, c0, cw, a_alloc, partial;
  };
  std::vector<Cell> cells;
  std::vector<Need> needs;
  for (std::uint32_t kb = 0; kb < grid.k_splits; ++kb) {
    for (std::uint32_t cb = 0; cb < grid.c_splits; ++cb) {
      Cell c{kb * grid.c_splits + cb, kb * grid.k_block, 0, cb * grid.c_block, 0, 0, 0};
      c.kw = std::min(grid.k_block, shape.inner - c.k0);
      c.cw = std::min(grid.c_block, shape.columns - c.c0);
      c.a_alloc = cx.allocate(c.tile, op.name + ".a", AllocationKind::activation, a.rows * c.kw * esize,
                              RegionNeed::interleaved);
      needs.push_back(Need{c.tile, c.a_alloc, 0, 0, a.rows, c.k0, c.kw});
      cells.push_back(c);
    }
  }
  std::vector<Transfer> transfers;
  plan_transfers(a, needs, transfers);
  cx.add_transfers(std::move(transfers));

  for (Cell& c : cells) {
    std::uint32_t stride = 0;
    const std::uint32_t weight = cx.resident_weight(w_id, c.tile, c.k0, c.kw, c.c0, c.cw, RegionNeed::interleaved, &stride);
    c.partial = cx.allocate(c.tile, op.name + ".partial", AllocationKind::activation, a.rows * c.cw * 2, RegionNeed::any);
    cx.conflict(c.partial, c.a_alloc);
    KernelCall k = call(fp8 ? KernelKind::gemm_fp8 : KernelKind::gemm_fp16, c.tile, {a.rows, c.kw, c.cw, 0},
                        {cx.operand(c.a_alloc, 0, a.rows * c.kw * esize), cx.operand(weight, 0, c.kw * c.cw * esize, stride),
                         cx.operand(c.partial, 0, a.rows * c.cw * 2)});
    k.scale = g.numerics.role(op.role).scale;
    cx.add_call(std::move(k));
  }

  Distribution out{a.rows, w.cols, DType::f16, 0, {}};
  if (grid.k_splits == 1) {
    for (const Cell& c : cells) out.blocks.push_back(Block{0, a.rows, c.c0, c.cw, c.tile, c.partial, 0});
    cx.set_dist(op.output, std::move(out));
    return;
  }
  // Reduce-scatter by rows: tile (kb', cb) sums row block kb' of every partial of column block cb.
  const std::uint32_t row_block = ceil_div(a.rows, grid.k_splits);
  struct Reduction {
    std::uint32_t tile, r0, rows, c0, cw, parts;
  };
  std::vector<Reduction> reductions;
  std::vector<Transfer> partial_moves;
  for (std::uint32_t cb = 0; cb < grid.c_splits; ++cb) {
    for (std::uint32_t rb = 0; rb < grid.k_splits; ++rb) {
      const std::uint32_t r0 = rb * row_block;
      if (r0 >= a.rows) break;
      const std::uint32_t rows = std::min(row_block, a.rows - r0);
      const Cell& target = cells[rb * grid.c_splits + cb];
      const std::uint32_t bytes = rows * target.cw * 2;
      Reduction red{target.tile, r0, rows, target.c0, target.cw, 0};
      red.parts = cx.allocate(red.tile, op.name + ".partials", AllocationKind::activation, bytes * grid.k_splits,
                              RegionNeed::any);
      for (std::uint32_t kb = 0; kb < grid.k_splits; ++kb) {
        const Cell& src = cells[kb * grid.c_splits + cb];
        Transfer t;
        t.source = Endpoint{src.tile, src.partial, r0 * src.cw * 2};
        t.bytes = bytes;
        t.destinations.push_back(Endpoint{red.tile, red.parts, kb * bytes});
        partial_moves.push_back(std::move(t));
      }
      reductions.push_back(red);
    }
  }
  cx.add_transfers(std::move(partial_moves));
  for (const Reduction& red : reductions) {
    const std::uint32_t n = red.rows * red.cw;
    const std::uint32_t acc = cx.allocate(red.tile, op.name + ".acc", AllocationKind::activation, n * 2, RegionNeed::any);
    cx.add_call(call(KernelKind::reduce_add, red.tile, {n, grid.k_splits, 0, 0},
                     {cx.operand(red.parts, 0, n * 2 * grid.k_splits), cx.operand(acc, 0, n * 2)}));
    out.blocks.push_back(Block{red.r0, red.rows, red.c0, red.cw, red.tile, acc, 0});
  }
  cx.set_dist(op.output, std::move(out));
}

void lower_elementwise(LoweringContext& cx, const Op& op) {
  const Distribution& in = cx.dist(op.inputs[0]);
  switch (op.kind) {
    case OpKind::cast_fp8: {
      Distribution out = cx.allocate_like(in, op.name + ".out", DType::f143);
      for (std::size_t i = 0; i < in.blocks.size(); ++i) {
        const Block& b = in.blocks[i];
        KernelCall k = call(KernelKind::cast_fp8, b.tile, {b.rows * b.cols, 0, 0, 0},
                            {whole(cx, b, DType::f16), whole(cx, out.blocks[i], DType::f143)});
        k.scale = cx.graph.numerics.role(op.role).scale;
        cx.add_call(std::move(k));
      }
      cx.set_dist(op.output, std::move(out));
      return;
    }
    case OpKind::bias_add: {
      const Distribution d = in;  // in place
      for (const Block& b : d.blocks) {
        std::uint32_t stride = 0;
        const std::uint32_t bias = cx.resident_weight(op.inputs[1], b.tile, 0, 1, b.col0, b.cols, RegionNeed::any, &stride);
        cx.add_call(call(KernelKind::bias_add, b.tile, {b.rows, b.cols, 0, 0},
                         {whole(cx, b, DType::f16), cx.operand(bias, 0, b.cols * 2, stride), whole(cx, b, DType::f16)}));
      }
      cx.set_dist(op.output, d);
      return;
    }
    case OpKind::gelu: {
      const Distribution d = in;
      for (const Block& b : d.blocks)
        cx.add_call(call(KernelKind::gelu, b.tile, {b.rows * b.cols, 0, 0, 0}, {whole(cx, b, DType::f16), whole(cx, b, DType::f16)}));
      cx.set_dist(op.output, d);
      return;
    }
    case OpKind::add: {
      const Distribution d = in;  // accumulate into the left operand in place
      std::vector<std::uint32_t> rhs(d.blocks.size());
      std::vector<std::uint32_t> strides(d.blocks.size(), 0);
      if (cx.is_weight(op.inputs[1])) {
        for (std::size_t i = 0; i < d.blocks.size(); ++i) {
          const Block& b = d.blocks[i];
          rhs[i] = cx.resident_weight(op.inputs[1], b.tile, b.row0, b.rows, b.col0, b.cols, RegionNeed::any, &strides[i]);
        }
      } else {
        const Distribution gathered = cx.gather(op.inputs[1], d, op.name + ".rhs");
        for (std::size_t i = 0; i < d.blocks.size(); ++i) rhs[i] = gathered.blocks[i].allocation;
      }
      for (std::size_t i = 0; i < d.blocks.size(); ++i) {
        const Block& b = d.blocks[i];
        cx.add_call(call(KernelKind::add, b.tile, {b.rows * b.cols, 0, 0, 0},
                         {whole(cx, b, DType::f16), cx.operand(rhs[i], 0, b.rows * b.cols * 2, strides[i]),
                          whole(cx, b, DType::f16)}));
      }
      cx.set_dist(op.output, d);
      return;
    }
    default:
      throw Error("compiler: not an element-wise op: " + op.name, kExitInternal);
  }
}

void lower_layernorm(LoweringContext& cx, const Op& op) {
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
    KernelCall k = call(KernelKind::layernorm, b.tile, {b.rows, b.cols, 0, 0},
                        {whole(cx, b, DType::f16), cx.operand(gammas[i].second, 0, b.cols * 2),
                         cx.operand(betas[i].second, 0, b.cols * 2), whole(cx, out.blocks[i], DType::f16)});
    k.param = op.eps;
    cx.add_call(std::move(k));
  }
  cx.set_dist(op.output, std::move(out));
}

void lower_attention(LoweringContext& cx, const Op& op) {
  const Graph& g = cx.graph;
  const Distribution& q = cx.dist(op.inputs[0]);
  const Distribution& kv = cx.dist(op.inputs[1]);
  const std::uint32_t queries = q.rows, keys = kv.rows, d = op.head_dim, heads = op.heads;
  const std::uint32_t blocks_per_head = std::max(1u, std::min(queries, cx.tiles() / heads));
  const std::uint32_t per_block = ceil_div(queries, blocks_per_head);
  const std::uint32_t query_blocks = ceil_div(queries, per_block);
  struct Cell {
    std::uint32_t tile, r0, rows, h, q, k, v, scores, out;
  };
  std::vector<Cell> cells;
  std::vector<Need> q_needs, kv_needs;
  for (std::uint32_t h = 0; h < heads; ++h) {
    for (std::uint32_t qb = 0; qb < query_blocks; ++qb) {
      Cell c{h * query_blocks + qb, qb * per_block, 0, h, 0, 0, 0, 0, 0};
      c.rows = std::min(per_block, queries - c.r0);
      c.q = cx.allocate(c.tile, op.name + ".q", AllocationKind::activation, c.rows * d * 2, RegionNeed::any);
      c.k = cx.allocate(c.tile, op.name + ".k", AllocationKind::activation, keys * d * 2, RegionNeed::any);
      c.v = cx.allocate(c.tile, op.name + ".v", AllocationKind::activation, keys * d * 2, RegionNeed::any);
      q_needs.push_back(Need{c.tile, c.q, 0, c.r0, c.rows, op.q_col + h * d, d});
      kv_needs.push_back(Need{c.tile, c.k, 0, 0, keys, op.k_col + h * d, d});
      kv_needs.push_back(Need{c.tile, c.v, 0, 0, keys, op.v_col + h * d, d});
      cells.push_back(c);
    }
  }
  std::vector<Transfer> transfers;
  plan_transfers(q, q_needs, transfers);
  plan_transfers(kv, kv_needs, transfers);
  cx.add_transfers(std::move(transfers));
  Distribution out{queries, heads * d, DType::f16, 0, {}};
  for (Cell& c : cells) {
    c.scores = cx.allocate(c.tile, op.name + ".scores", AllocationKind::scratch, c.rows * keys * 4, RegionNeed::any);
    c.out = cx.allocate(c.tile, op.name + ".out", AllocationKind::activation, c.rows * d * 2, RegionNeed::any);
    KernelCall k = call(KernelKind::attention, c.tile, {c.rows, keys, d, d},
                        {cx.operand(c.q, 0, c.rows * d * 2), cx.operand(c.k, 0, keys * d * 2), cx.operand(c.v, 0, keys * d * 2),
                         cx.operand(c.scores, 0, c.rows * keys * 4), cx.operand(c.out, 0, c.rows * d * 2)});
    k.param = 1.0f / std::sqrt(static_cast<float>(d));
    cx.add_call(std::move(k));
    out.blocks.push_back(Block{c.r0, c.rows, c.h * d, d, c.tile, c.out, 0});
  }
  (void)g;
  cx.set_dist(op.output, std::move(out));
}

}  // namespace tilevit::compiler
