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

KernelCall call(KernelKind kind, std::uint32_t tile, std::initializer_list<std::pair<Dim, std::uint32_t>> dims,
                std::vector<Operand> operands) {
  KernelCall c;
  c.kind = kind;
  c.tile = tile;
  c.dims = make_dims(kind, dims);
  c.operands = std::move(operands);
  return c;
}

Operand whole(LoweringContext& cx, const Block& b, DType dtype, std::uint32_t stride = 0) {
  return cx.operand(b.allocation, b.offset, b.rows * b.cols * dtype_bytes(dtype), stride);
}

// Reduce-scatter of one group of partial sums: `partials` are (tile, allocation) pairs,
// each holding rows x row_bytes. The rows are cut into one sub-block per partial; the
// tile of partial k2 receives sub-block k2 of every partial, stacked in partial order,
// into a fresh allocation. Transfers go to `moves`.
struct ScatteredRows {
  std::uint32_t tile, row0, rows, parts;
};
std::vector<ScatteredRows> scatter_rows(LoweringContext& cx, const std::string& label,
                                        const std::vector<std::pair<std::uint32_t, std::uint32_t>>& partials,
                                        std::uint32_t rows, std::uint32_t row_bytes, std::vector<Transfer>& moves) {
  const auto n = static_cast<std::uint32_t>(partials.size());
  const std::uint32_t sub = ceil_div(rows, n);
  std::vector<ScatteredRows> out;
  for (std::uint32_t k2 = 0; k2 < n && k2 * sub < rows; ++k2) {
    const std::uint32_t count = std::min(sub, rows - k2 * sub);
    const std::uint32_t bytes = count * row_bytes;
    ScatteredRows part{partials[k2].first, k2 * sub, count, 0};
    part.parts = cx.allocate(part.tile, label, AllocationKind::activation, bytes * n, RegionNeed::any);
    for (std::uint32_t k = 0; k < n; ++k) {
      Transfer t;
      t.source = Endpoint{partials[k].first, partials[k].second, k2 * sub * row_bytes};
      t.bytes = bytes;
      t.destinations.push_back(Endpoint{part.tile, part.parts, k * bytes});
      moves.push_back(std::move(t));
    }
    out.push_back(part);
  }
  return out;
}

}  // namespace

void lower_gemm(LoweringContext& cx, const Op& op) {
  const Graph& g = cx.graph;
  const int a_id = op.inputs[0], w_id = op.inputs[1];
  const Distribution& a = cx.dist(a_id);
  const Tensor& w = g.tensor(w_id);
  const bool fp8 = g.numerics.role(op.role).fp8;
  const GemmShape shape{a.rows, w.rows, w.cols, fp8};
  const GemmGrid grid = plan_gemm_grid(cx.machine, shape, cx.tiles(), cx.options.pins, op.name);
  cx.record_gemm_inner_block(op.role, grid.k_splits > 1 ? grid.k_block : 0);
  const std::uint32_t esize = fp8 ? 1 : 2;
  const std::uint32_t rg = grid.r_splits, kg = grid.k_splits, cg = grid.c_splits;

  struct Cell {
    std::uint32_t tile, r0, rows, k0, kw, c0, cw, a_alloc, w_alloc, w_stride, partial;
  };
  std::vector<Cell> cells;  // index (r * kg + k) * cg + c
  std::vector<Need> needs;
  for (std::uint32_t r = 0; r < rg; ++r)
    for (std::uint32_t k = 0; k < kg; ++k)
      for (std::uint32_t c = 0; c < cg; ++c) {
        Cell cell{};
        cell.tile = (r * kg + k) * cg + c;
        cell.r0 = r * grid.r_block;
        cell.rows = std::min(grid.r_block, shape.rows - cell.r0);
        cell.k0 = k * grid.k_block;
        cell.kw = std::min(grid.k_block, shape.inner - cell.k0);
        cell.c0 = c * grid.c_block;
        cell.cw = std::min(grid.c_block, shape.columns - cell.c0);
        cell.a_alloc = cx.allocate(cell.tile, op.name + ".a", AllocationKind::activation, cell.rows * cell.kw * esize,
                                   RegionNeed::interleaved);
        needs.push_back(Need{cell.tile, cell.a_alloc, 0, cell.r0, cell.rows, cell.k0, cell.kw});
        cells.push_back(cell);
      }
  auto at = [&](std::uint32_t r, std::uint32_t k, std::uint32_t c) -> Cell& { return cells[(r * kg + k) * cg + c]; };
  std::vector<Transfer> transfers;
  plan_transfers(a, needs, transfers);

  // Weights: resident blocks (Rg = 1), or row pieces homed on the Rg tiles of a block and
  // multicast into each one's whole-block buffer for every call.
  for (std::uint32_t k = 0; k < kg; ++k)
    for (std::uint32_t c = 0; c < cg; ++c) {
      const Cell& first = at(0, k, c);
      if (rg == 1) {
        Cell& cell = at(0, k, c);
        cell.w_alloc = cx.resident_weight(w_id, cell.tile, cell.k0, cell.kw, cell.c0, cell.cw, RegionNeed::interleaved,
                                          &cell.w_stride);
        continue;
      }
      for (std::uint32_t r = 0; r < rg; ++r)
        at(r, k, c).w_alloc = cx.allocate(at(r, k, c).tile, op.name + ".w", AllocationKind::activation,
                                          first.kw * first.cw * esize, RegionNeed::interleaved);
      const std::uint32_t piece = ceil_div(first.kw, rg);
      for (std::uint32_t p = 0; p < rg && p * piece < first.kw; ++p) {
        const std::uint32_t prow = first.k0 + p * piece, prows = std::min(piece, first.kw - p * piece);
        std::uint32_t stride = 0;
        const std::uint32_t home = cx.resident_weight(w_id, at(p, k, c).tile, prow, prows, first.c0, first.cw,
                                                      RegionNeed::any, &stride);
        Transfer t;
        t.source = Endpoint{at(p, k, c).tile, home, 0};
        t.bytes = prows * first.cw * esize;
        t.source_layer_stride = stride;
        for (std::uint32_t r = 0; r < rg; ++r)
          t.destinations.push_back(Endpoint{at(r, k, c).tile, at(r, k, c).w_alloc, p * piece * first.cw * esize});
        transfers.push_back(std::move(t));
      }
    }
  cx.add_transfers(std::move(transfers));

  for (Cell& cell : cells) {
    cell.partial = cx.allocate(cell.tile, op.name + ".partial", AllocationKind::activation, cell.rows * cell.cw * 2,
                               RegionNeed::any);
    cx.conflict(cell.partial, cell.a_alloc);
    KernelCall k = call(fp8 ? KernelKind::gemm_fp8 : KernelKind::gemm_fp16, cell.tile,
                        {{Dim::rows, cell.rows}, {Dim::inner, cell.kw}, {Dim::cols, cell.cw}},
                        {cx.operand(cell.a_alloc, 0, cell.rows * cell.kw * esize),
                         cx.operand(cell.w_alloc, 0, cell.kw * cell.cw * esize, cell.w_stride),
                         cx.operand(cell.partial, 0, cell.rows * cell.cw * 2)});
    k.scale = g.numerics.role(op.role).scale;
    cx.add_call(std::move(k));
  }

  Distribution out{a.rows, w.cols, DType::f16, 0, {}};
  if (kg == 1) {
    for (const Cell& cell : cells) out.blocks.push_back(Block{cell.r0, cell.rows, cell.c0, cell.cw, cell.tile, cell.partial, 0});
    cx.set_dist(op.output, std::move(out));
    return;
  }
  // Reduce-scatter: in each (r, c) group, tile (r, k', c) sums sub-block k' of the rows.
  struct Reduction {
    std::uint32_t tile, r0, rows, c0, cw, parts;
  };
  std::vector<Reduction> reductions;
  std::vector<Transfer> moves;
  for (std::uint32_t r = 0; r < rg; ++r)
    for (std::uint32_t c = 0; c < cg; ++c) {
      const Cell& head = at(r, 0, c);
      std::vector<std::pair<std::uint32_t, std::uint32_t>> partials;
      for (std::uint32_t k = 0; k < kg; ++k) partials.emplace_back(at(r, k, c).tile, at(r, k, c).partial);
      for (const auto& part : scatter_rows(cx, op.name + ".partials", partials, head.rows, head.cw * 2, moves))
        reductions.push_back(Reduction{part.tile, head.r0 + part.row0, part.rows, head.c0, head.cw, part.parts});
    }
  cx.add_transfers(std::move(moves));
  for (const Reduction& red : reductions) {
    const std::uint32_t n = red.rows * red.cw;
    const std::uint32_t acc = cx.allocate(red.tile, op.name + ".acc", AllocationKind::activation, n * 2, RegionNeed::any);
    cx.add_call(call(KernelKind::reduce_add, red.tile, {{Dim::count, n}, {Dim::partials, kg}},
                     {cx.operand(red.parts, 0, n * 2 * kg), cx.operand(acc, 0, n * 2)}));
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
        KernelCall k = call(KernelKind::cast_fp8, b.tile, {{Dim::count, b.rows * b.cols}},
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
        cx.add_call(call(KernelKind::bias_add, b.tile, {{Dim::rows, b.rows}, {Dim::cols, b.cols}},
                         {whole(cx, b, DType::f16), cx.operand(bias, 0, b.cols * 2, stride), whole(cx, b, DType::f16)}));
      }
      cx.set_dist(op.output, d);
      return;
    }
    case OpKind::gelu: {
      const Distribution d = in;
      for (const Block& b : d.blocks)
        cx.add_call(call(KernelKind::gelu, b.tile, {{Dim::count, b.rows * b.cols}}, {whole(cx, b, DType::f16), whole(cx, b, DType::f16)}));
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
        cx.add_call(call(KernelKind::add, b.tile, {{Dim::count, b.rows * b.cols}},
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
    KernelCall k = call(KernelKind::layernorm, b.tile, {{Dim::rows, b.rows}, {Dim::width, b.cols}},
                        {whole(cx, b, DType::f16), cx.operand(gammas[i].second, 0, b.cols * 2),
                         cx.operand(betas[i].second, 0, b.cols * 2), whole(cx, out.blocks[i], DType::f16)});
    k.param = op.eps;
    cx.add_call(std::move(k));
  }
  cx.set_dist(op.output, std::move(out));
}

// Attention by head x query block x key block (docs/COMPILER.md): three supersteps with
// the maxima all-gathered and the partial sums reduce-scattered in between.
void lower_attention(LoweringContext& cx, const Op& op) {
  const Distribution& q = cx.dist(op.inputs[0]);
  const Distribution& kv = cx.dist(op.inputs[1]);
  const std::uint32_t images = op.images, d = op.head_dim, heads = op.heads;
  const std::uint32_t queries = op.shared_query ? q.rows : q.rows / images, keys = kv.rows / images;
  const AttentionGrid grid =
      plan_attention_grid(cx.machine, queries, keys, d, heads, std::max(1u, cx.tiles() / images), cx.options.pins, op.name);
  cx.record_attention_key_block(op.attention_use, grid.key_block);
  const std::uint32_t qbs = ceil_div(queries, grid.query_block), kbs = ceil_div(keys, grid.key_block);
  struct Cell {
    std::uint32_t tile, r0, rows, j0, keys, h, qb, kb, image, q, k, v, scores, maxima, gathered, partial;
  };
  std::vector<Cell> cells;
  auto at = [&](std::uint32_t b, std::uint32_t h, std::uint32_t qb, std::uint32_t kb) -> Cell& {
    return cells[((b * heads + h) * qbs + qb) * kbs + kb];
  };
  std::vector<Need> q_needs, k_needs, v_needs;
  for (std::uint32_t b = 0; b < images; ++b)
    for (std::uint32_t h = 0; h < heads; ++h)
      for (std::uint32_t qb = 0; qb < qbs; ++qb)
        for (std::uint32_t kb = 0; kb < kbs; ++kb) {
          Cell c{};
          c.tile = (((b * heads + h) * qbs + qb) * kbs + kb) % cx.tiles();
          c.image = b;
          c.h = h;
          c.qb = qb;
          c.kb = kb;
          c.r0 = qb * grid.query_block;
          c.rows = std::min(grid.query_block, queries - c.r0);
          c.j0 = kb * grid.key_block;
          c.keys = std::min(grid.key_block, keys - c.j0);
          c.q = cx.allocate(c.tile, op.name + ".q", AllocationKind::activation, c.rows * d * 2, RegionNeed::any);
          c.k = cx.allocate(c.tile, op.name + ".k", AllocationKind::activation, c.keys * d * 2, RegionNeed::any);
          const std::uint32_t q_row = op.shared_query ? c.r0 : b * queries + c.r0;
          q_needs.push_back(Need{c.tile, c.q, 0, q_row, c.rows, op.q_col + h * d, d});
          k_needs.push_back(Need{c.tile, c.k, 0, b * keys + c.j0, c.keys, op.k_col + h * d, d});
          cells.push_back(c);
        }
  std::vector<Transfer> transfers;
  plan_transfers(q, q_needs, transfers);
  plan_transfers(kv, k_needs, transfers);
  cx.add_transfers(std::move(transfers));

  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  for (Cell& c : cells) {
    c.scores = cx.allocate(c.tile, op.name + ".scores", AllocationKind::scratch, c.rows * c.keys * 4, RegionNeed::any);
    c.maxima = cx.allocate(c.tile, op.name + ".max", AllocationKind::scratch, c.rows * 4, RegionNeed::any);
    KernelCall k = call(KernelKind::attention_scores, c.tile,
                        {{Dim::queries, c.rows}, {Dim::keys, c.keys}, {Dim::head_dim, d}},
                        {cx.operand(c.q, 0, c.rows * d * 2), cx.operand(c.k, 0, c.keys * d * 2),
                         cx.operand(c.scores, 0, c.rows * c.keys * 4), cx.operand(c.maxima, 0, c.rows * 4)});
    k.param = scale;
    cx.add_call(std::move(k));
  }
  // All-gather of the row maxima inside each (head, query block) group, and V.
  for (Cell& c : cells) {
    c.gathered = cx.allocate(c.tile, op.name + ".maxima", AllocationKind::scratch, kbs * c.rows * 4, RegionNeed::any);
    c.v = cx.allocate(c.tile, op.name + ".v", AllocationKind::activation, c.keys * d * 2, RegionNeed::any);
    v_needs.push_back(Need{c.tile, c.v, 0, c.image * keys + c.j0, c.keys, op.v_col + c.h * d, d});
  }
  std::vector<Transfer> moves;
  for (const Cell& c : cells) {
    Transfer t;
    t.source = Endpoint{c.tile, c.maxima, 0};
    t.bytes = c.rows * 4;
    for (std::uint32_t kb = 0; kb < kbs; ++kb)
      t.destinations.push_back(Endpoint{at(c.image, c.h, c.qb, kb).tile, at(c.image, c.h, c.qb, kb).gathered, c.kb * c.rows * 4});
    moves.push_back(std::move(t));
  }
  plan_transfers(kv, v_needs, moves);
  cx.add_transfers(std::move(moves));
  for (Cell& c : cells) {
    c.partial = cx.allocate(c.tile, op.name + ".partial", AllocationKind::activation, c.rows * (d + 1) * 4, RegionNeed::any);
    cx.add_call(call(KernelKind::attention_values, c.tile,
                     {{Dim::queries, c.rows}, {Dim::keys, c.keys}, {Dim::head_dim, d}, {Dim::key_blocks, kbs}},
                     {cx.operand(c.scores, 0, c.rows * c.keys * 4), cx.operand(c.gathered, 0, kbs * c.rows * 4),
                      cx.operand(c.v, 0, c.keys * d * 2), cx.operand(c.partial, 0, c.rows * (d + 1) * 4)}));
  }
  // Reduce-scatter of the partials: tile kb' of a group combines row sub-block kb'.
  const std::uint32_t out_rows_per_image = queries;
  Distribution out{images * out_rows_per_image, heads * d, DType::f16, 0, {}};
  struct Combine {
    std::uint32_t tile, r0, rows, h, parts;
  };
  std::vector<Combine> combines;
  std::vector<Transfer> partial_moves;
  for (std::uint32_t b = 0; b < images; ++b)
    for (std::uint32_t h = 0; h < heads; ++h)
      for (std::uint32_t qb = 0; qb < qbs; ++qb) {
        const Cell& head = at(b, h, qb, 0);
        std::vector<std::pair<std::uint32_t, std::uint32_t>> partials;
        for (std::uint32_t kb = 0; kb < kbs; ++kb) partials.emplace_back(at(b, h, qb, kb).tile, at(b, h, qb, kb).partial);
        for (const auto& part : scatter_rows(cx, op.name + ".partials", partials, head.rows, (d + 1) * 4, partial_moves))
          combines.push_back(Combine{part.tile, b * out_rows_per_image + head.r0 + part.row0, part.rows, h, part.parts});
      }
  cx.add_transfers(std::move(partial_moves));
  for (const Combine& cb : combines) {
    const std::uint32_t o = cx.allocate(cb.tile, op.name + ".out", AllocationKind::activation, cb.rows * d * 2, RegionNeed::any);
    cx.add_call(call(KernelKind::attention_combine, cb.tile,
                     {{Dim::rows, cb.rows}, {Dim::head_dim, d}, {Dim::key_blocks, kbs}},
                     {cx.operand(cb.parts, 0, cb.rows * (d + 1) * 4 * kbs), cx.operand(o, 0, cb.rows * d * 2)}));
    out.blocks.push_back(Block{cb.r0, cb.rows, cb.h * d, d, cb.tile, o, 0});
  }
  cx.set_dist(op.output, std::move(out));
}

}  // namespace tilevit::compiler
