// Per-op lowering rules (the schedule): GEMM grids with reduce-scatter, element-wise
// work in place on the producer's blocks, attention by head and query block (LayerNorm:
// lower_norm.cpp).
#include <algorithm>
#include <cmath>

#include "compiler/gemm_plan.hpp"
#include "compiler/lowering_context.hpp"
#include "support/error.hpp"

namespace tilevit::compiler {
namespace {

std::uint32_t ceil_div(std::uint32_t a, std::uint32_t b) { return (a + b - 1) / b; }

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

// One GEMM over its grid: tile (r, k, c) computes row block r x K block k x column block
// c. The steps below run in this order, which fixes allocation and transfer order.
class GemmLowering {
 public:
  GemmLowering(LoweringContext& cx, const Op& op)
      : cx_(cx), op_(op), a_(cx.dist(op.inputs[0])), w_id_(op.inputs[1]),
        fp8_(cx.graph.numerics.role(op.role).fp8), esize_(fp8_ ? 1 : 2),
        shape_{a_.rows, cx.graph.tensor(w_id_).rows, cx.graph.tensor(w_id_).cols, fp8_},
        grid_(plan_gemm_grid(cx.machine, shape_, cx.tiles(), cx.options.plan.pins, op.name,
                             GemmMemoryCap{cx.options.gemm_tile_bytes_cap, cx.layers_of(w_id_)})),
        first_tile_(cx.tile_offset(op.name)) {
    cx.record_gemm_inner_block(op.role, grid_.k_splits > 1 ? grid_.k_block : 0);
    cx.record_gemm_grid(op.name, grid_, gemm_tile_bytes(shape_, grid_, cx.layers_of(w_id_)));
  }

  void lower() {
    std::vector<Transfer> transfers;
    gather_a(transfers);
    place_weights(transfers);
    cx_.add_transfers(std::move(transfers));
    emit_products();
    if (grid_.k_splits == 1) {
      Distribution out{a_.rows, shape_.columns, DType::f16, 0, {}};
      for (const Cell& cell : cells_) out.blocks.push_back(Block{cell.r0, cell.rows, cell.c0, cell.cw, cell.tile, cell.partial, 0});
      cx_.set_dist(op_.output, std::move(out));
      return;
    }
    reduce_scatter();
  }

 private:
  struct Cell {
    std::uint32_t tile, r0, rows, k0, kw, c0, cw, a_alloc, w_alloc, w_stride, partial;
  };
  Cell& at(std::uint32_t r, std::uint32_t k, std::uint32_t c) {
    return cells_[(r * grid_.k_splits + k) * grid_.c_splits + c];
  }

  // Every cell's block of A, gathered from A's distribution into the interleaved region.
  void gather_a(std::vector<Transfer>& transfers) {
    std::vector<Need> needs;
    for (std::uint32_t r = 0; r < grid_.r_splits; ++r)
      for (std::uint32_t k = 0; k < grid_.k_splits; ++k)
        for (std::uint32_t c = 0; c < grid_.c_splits; ++c) {
          Cell cell{};
          cell.tile = ((r * grid_.k_splits + k) * grid_.c_splits + c + first_tile_) % cx_.tiles();
          cell.r0 = r * grid_.r_block;
          cell.rows = std::min(grid_.r_block, shape_.rows - cell.r0);
          cell.k0 = k * grid_.k_block;
          cell.kw = std::min(grid_.k_block, shape_.inner - cell.k0);
          cell.c0 = c * grid_.c_block;
          cell.cw = std::min(grid_.c_block, shape_.columns - cell.c0);
          cell.a_alloc = cx_.allocate(cell.tile, op_.name + ".a", AllocationKind::activation, cell.rows * cell.kw * esize_,
                                      RegionNeed::interleaved);
          needs.push_back(Need{cell.tile, cell.a_alloc, 0, cell.r0, cell.rows, cell.k0, cell.kw});
          cells_.push_back(cell);
        }
    plan_transfers(a_, needs, transfers);
  }

  // Weights: resident blocks (Rg = 1), or row pieces homed on the Rg tiles of a block and
  // multicast into each one's whole-block buffer for every call.
  void place_weights(std::vector<Transfer>& transfers) {
    const std::uint32_t rg = grid_.r_splits;
    for (std::uint32_t k = 0; k < grid_.k_splits; ++k)
      for (std::uint32_t c = 0; c < grid_.c_splits; ++c) {
        Cell& first = at(0, k, c);
        if (rg == 1) {
          first.w_alloc = cx_.resident_weight(w_id_, first.tile, first.k0, first.kw, first.c0, first.cw,
                                              RegionNeed::interleaved, &first.w_stride);
          continue;
        }
        for (std::uint32_t r = 0; r < rg; ++r)
          at(r, k, c).w_alloc = cx_.allocate(at(r, k, c).tile, op_.name + ".w", AllocationKind::activation,
                                             first.kw * first.cw * esize_, RegionNeed::interleaved);
        const std::uint32_t piece = ceil_div(first.kw, rg);
        for (std::uint32_t p = 0; p < rg && p * piece < first.kw; ++p) {
          const std::uint32_t prow = first.k0 + p * piece, prows = std::min(piece, first.kw - p * piece);
          std::uint32_t stride = 0;
          const std::uint32_t home = cx_.resident_weight(w_id_, at(p, k, c).tile, prow, prows, first.c0, first.cw,
                                                         RegionNeed::any, &stride);
          Transfer t;
          t.source = Endpoint{at(p, k, c).tile, home, 0};
          t.bytes = prows * first.cw * esize_;
          t.source_layer_stride = stride;
          for (std::uint32_t r = 0; r < rg; ++r)
            t.destinations.push_back(Endpoint{at(r, k, c).tile, at(r, k, c).w_alloc, p * piece * first.cw * esize_});
          transfers.push_back(std::move(t));
        }
      }
  }

  void emit_products() {
    for (Cell& cell : cells_) {
      cell.partial = cx_.allocate(cell.tile, op_.name + ".partial", AllocationKind::activation, cell.rows * cell.cw * 2,
                                  RegionNeed::any);
      cx_.conflict(cell.partial, cell.a_alloc);
      KernelCall k = kernel_call(fp8_ ? KernelKind::gemm_fp8 : KernelKind::gemm_fp16, cell.tile,
                          {{Dim::rows, cell.rows}, {Dim::inner, cell.kw}, {Dim::cols, cell.cw}},
                          {cx_.operand(cell.a_alloc, 0, cell.rows * cell.kw * esize_),
                           cx_.operand(cell.w_alloc, 0, cell.kw * cell.cw * esize_, cell.w_stride),
                           cx_.operand(cell.partial, 0, cell.rows * cell.cw * 2)});
      k.scale = cx_.graph.numerics.role(op_.role).scale;
      cx_.add_call(std::move(k));
    }
  }

  // Reduce-scatter: in each (r, c) group, tile (r, k', c) sums sub-block k' of the rows.
  void reduce_scatter() {
    struct Reduction {
      std::uint32_t tile, r0, rows, c0, cw, parts;
    };
    const std::uint32_t kg = grid_.k_splits;
    std::vector<Reduction> reductions;
    std::vector<Transfer> moves;
    for (std::uint32_t r = 0; r < grid_.r_splits; ++r)
      for (std::uint32_t c = 0; c < grid_.c_splits; ++c) {
        const Cell& head = at(r, 0, c);
        std::vector<std::pair<std::uint32_t, std::uint32_t>> partials;
        for (std::uint32_t k = 0; k < kg; ++k) partials.emplace_back(at(r, k, c).tile, at(r, k, c).partial);
        for (const auto& part : scatter_rows(cx_, op_.name + ".partials", partials, head.rows, head.cw * 2, moves))
          reductions.push_back(Reduction{part.tile, head.r0 + part.row0, part.rows, head.c0, head.cw, part.parts});
      }
    cx_.add_transfers(std::move(moves));
    Distribution out{a_.rows, shape_.columns, DType::f16, 0, {}};
    for (const Reduction& red : reductions) {
      const std::uint32_t n = red.rows * red.cw;
      const std::uint32_t acc = cx_.allocate(red.tile, op_.name + ".acc", AllocationKind::activation, n * 2, RegionNeed::any);
      cx_.add_call(kernel_call(KernelKind::reduce_add, red.tile, {{Dim::count, n}, {Dim::partials, kg}},
                        {cx_.operand(red.parts, 0, n * 2 * kg), cx_.operand(acc, 0, n * 2)}));
      out.blocks.push_back(Block{red.r0, red.rows, red.c0, red.cw, red.tile, acc, 0});
    }
    cx_.set_dist(op_.output, std::move(out));
  }

  LoweringContext& cx_;
  const Op& op_;
  const Distribution& a_;
  const int w_id_;
  const bool fp8_;
  const std::uint32_t esize_;
  const GemmShape shape_;
  const GemmGrid grid_;
  const std::uint32_t first_tile_;
  std::vector<Cell> cells_;  // index (r * kg + k) * cg + c
};

// Every block of `in` through `kind` (f16 -> F143 at `scale`) on its own tile, into fresh
// allocations: the FP8 cast, or a kernel that ends with it (gelu_f8).
Distribution fp8_blocks(LoweringContext& cx, const Distribution& in, KernelKind kind, const std::string& label, int scale) {
  Distribution out = cx.allocate_like(in, label, DType::f143);
  for (std::size_t i = 0; i < in.blocks.size(); ++i) {
    const Block& b = in.blocks[i];
    KernelCall k = kernel_call(kind, b.tile, {{Dim::count, b.rows * b.cols}},
                               {whole_block(cx, b, DType::f16), whole_block(cx, out.blocks[i], DType::f143)});
    k.scale = scale;
    cx.add_call(std::move(k));
  }
  return out;
}

}  // namespace

void lower_gemm(LoweringContext& cx, const Op& op) { GemmLowering(cx, op).lower(); }

void lower_fp8_output(LoweringContext& cx, const Distribution& in, KernelKind kind, const Op& cast) {
  cx.set_dist(cast.output, fp8_blocks(cx, in, kind, cast.name + ".out", cx.graph.numerics.role(cast.role).scale));
}

void lower_elementwise(LoweringContext& cx, const Op& op) {
  const Distribution& in = cx.dist(op.inputs[0]);
  switch (op.kind) {
    case OpKind::cast_fp8: lower_fp8_output(cx, in, KernelKind::cast_fp8, op); return;
    case OpKind::bias_add:
    case OpKind::scale_columns: {  // per-column vector, resident on each block's tile
      const Distribution d = in;  // in place
      const KernelKind kind = op.kind == OpKind::bias_add ? KernelKind::bias_add : KernelKind::scale_columns;
      for (const Block& b : d.blocks) {
        std::uint32_t stride = 0;
        const std::uint32_t bias = cx.resident_weight(op.inputs[1], b.tile, 0, 1, b.col0, b.cols, RegionNeed::any, &stride);
        cx.add_call(kernel_call(kind, b.tile, {{Dim::rows, b.rows}, {Dim::cols, b.cols}},
                         {whole_block(cx, b, DType::f16), cx.operand(bias, 0, b.cols * 2, stride), whole_block(cx, b, DType::f16)}));
      }
      cx.set_dist(op.output, d);
      return;
    }
    case OpKind::gelu: {
      const Distribution d = in;
      const KernelKind kind = op.activation == model::Activation::gelu_erf     ? KernelKind::gelu_erf
                              : op.activation == model::Activation::quick_gelu ? KernelKind::quick_gelu
                                                                               : KernelKind::gelu;
      for (const Block& b : d.blocks)
        cx.add_call(kernel_call(kind, b.tile, {{Dim::count, b.rows * b.cols}}, {whole_block(cx, b, DType::f16), whole_block(cx, b, DType::f16)}));
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
        cx.add_call(kernel_call(KernelKind::add, b.tile, {{Dim::count, b.rows * b.cols}},
                         {whole_block(cx, b, DType::f16), cx.operand(rhs[i], 0, b.rows * b.cols * 2, strides[i]),
                          whole_block(cx, b, DType::f16)}));
      }
      cx.set_dist(op.output, d);
      return;
    }
    default:
      throw Error("compiler: not an element-wise op: " + op.name, kExitInternal);
  }
}

// Rows 0, stride, 2 x stride, ... of the input, stacked (each image's class token): a
// gather only, an exchange phase of its own.
void lower_take_rows(LoweringContext& cx, const Op& op) {
  const Distribution& in = cx.dist(op.inputs[0]);
  const Tensor& out_tensor = cx.graph.tensor(op.output);
  Distribution out = cx.allocate_like(cx.row_split(out_tensor.rows, in.cols, in.dtype), op.name + ".out", in.dtype);
  const std::uint32_t row_bytes = in.cols * dtype_bytes(in.dtype);
  std::vector<Need> needs;
  for (const Block& b : out.blocks)
    for (std::uint32_t r = 0; r < b.rows; ++r)
      needs.push_back(Need{b.tile, b.allocation, r * row_bytes, (b.row0 + r) * op.row_stride, 1, 0, in.cols});
  std::vector<Transfer> transfers;
  plan_transfers(in, needs, transfers);
  cx.add_transfers(std::move(transfers));
  // No kernel closes this exchange: the next op's gathers read these rows, so they go
  // into the next superstep's exchange.
  cx.close_step_if_exchanging();
  cx.set_dist(op.output, std::move(out));
}

namespace {

// Attention by head x query block x key block (docs/COMPILER.md): three supersteps with
// the maxima all-gathered and the partial sums reduce-scattered in between. The steps run
// in this order, which fixes allocation and transfer order.
class AttentionLowering {
 public:
  AttentionLowering(LoweringContext& cx, const Op& op)
      : cx_(cx), op_(op), fp8_(fp8_products(cx, op)), esize_(fp8_ ? 1 : 2), qkv8_(fp8_ ? cast_qkv(cx, op) : Distribution{}),
        q_(fp8_ ? qkv8_ : cx.dist(op.inputs[0])), kv_(fp8_ ? qkv8_ : cx.dist(op.inputs[1])), images_(op.images), d_(op.head_dim),
        heads_(op.heads), queries_(op.shared_query ? q_.rows : q_.rows / images_), keys_(kv_.rows / images_),
        grid_(plan_attention_grid(cx.machine, queries_, keys_, d_, heads_, std::max(1u, cx.tiles() / images_),
                                  cx.options.plan.pins, op.name)),
        qbs_(ceil_div(queries_, grid_.query_block)), kbs_(ceil_div(keys_, grid_.key_block)),
        first_tile_(cx.tile_offset(op.name)) {
    cx.record_attention_key_block(op.attention_use, grid_.key_block);
    cx.record_attention_grid(op.name, grid_);
    if (fp8_) cx.record_fp8_attention(op.name);
  }

  void lower() {
    gather_q_k();
    emit_scores();
    share_maxima_and_gather_v();
    emit_values();
    combine();
  }

 private:
  struct Cell {
    std::uint32_t tile, r0, rows, j0, keys, h, qb, kb, image, q, k, v, scores, maxima, gathered, partial;
  };

  // FP8 products when the plan pins them (PlanPins::fp8_attention): the encoder's
  // self-attention only (Q, K and V come from one QKV GEMM), whole 32-bit words per head row.
  static bool fp8_products(const LoweringContext& cx, const Op& op) {
    if (!cx.options.plan.pins.fp8_attention.contains(op.name)) return false;
    if (op.attention_use != AttentionUse::encoder || op.inputs[0] != op.inputs[1] || op.head_dim % 4 != 0)
      throw Error("plan: fp8_attention for " + op.name + ": only the encoder's self-attention with a head dim that is a "
                  "multiple of 4 has FP8 products", kExitUsage);
    return true;
  }
  // The QKV epilogue: the QKV output cast to F143 on the tiles that hold it, before the
  // attention gathers its Q, K and V (one byte per element on the exchange).
  static Distribution cast_qkv(LoweringContext& cx, const Op& op) {
    return fp8_blocks(cx, cx.dist(op.inputs[0]), KernelKind::cast_fp8, op.name + ".qkv8", cx.graph.numerics.attention_scale);
  }
  Cell& at(std::uint32_t b, std::uint32_t h, std::uint32_t qb, std::uint32_t kb) {
    return cells_[((b * heads_ + h) * qbs_ + qb) * kbs_ + kb];
  }

  void gather_q_k() {
    std::vector<Need> q_needs, k_needs;
    for (std::uint32_t b = 0; b < images_; ++b)
      for (std::uint32_t h = 0; h < heads_; ++h)
        for (std::uint32_t qb = 0; qb < qbs_; ++qb)
          for (std::uint32_t kb = 0; kb < kbs_; ++kb) {
            Cell c{};
            c.tile = ((((b * heads_ + h) * qbs_ + qb) * kbs_ + kb) + first_tile_) % cx_.tiles();
            c.image = b;
            c.h = h;
            c.qb = qb;
            c.kb = kb;
            c.r0 = qb * grid_.query_block;
            c.rows = std::min(grid_.query_block, queries_ - c.r0);
            c.j0 = kb * grid_.key_block;
            c.keys = std::min(grid_.key_block, keys_ - c.j0);
            c.q = cx_.allocate(c.tile, op_.name + ".q", AllocationKind::activation, c.rows * d_ * esize_, RegionNeed::any);
            c.k = cx_.allocate(c.tile, op_.name + ".k", AllocationKind::activation, c.keys * d_ * esize_, RegionNeed::any);
            const std::uint32_t q_row = op_.shared_query ? c.r0 : b * queries_ + c.r0;
            q_needs.push_back(Need{c.tile, c.q, 0, q_row, c.rows, op_.q_col + h * d_, d_});
            k_needs.push_back(Need{c.tile, c.k, 0, b * keys_ + c.j0, c.keys, op_.k_col + h * d_, d_});
            cells_.push_back(c);
          }
    std::vector<Transfer> transfers;
    plan_transfers(q_, q_needs, transfers);
    plan_transfers(kv_, k_needs, transfers);
    cx_.add_transfers(std::move(transfers));
  }

  void emit_scores() {
    const float scale = 1.0f / std::sqrt(static_cast<float>(d_));
    for (Cell& c : cells_) {
      c.scores = cx_.allocate(c.tile, op_.name + ".scores", AllocationKind::scratch, c.rows * c.keys * 4, RegionNeed::any);
      c.maxima = cx_.allocate(c.tile, op_.name + ".max", AllocationKind::scratch, c.rows * 4, RegionNeed::any);
      KernelCall k = kernel_call(fp8_ ? KernelKind::attention_scores_fp8 : KernelKind::attention_scores, c.tile,
                                 {{Dim::queries, c.rows}, {Dim::keys, c.keys}, {Dim::head_dim, d_}},
                                 {cx_.operand(c.q, 0, c.rows * d_ * esize_), cx_.operand(c.k, 0, c.keys * d_ * esize_),
                                  cx_.operand(c.scores, 0, c.rows * c.keys * 4), cx_.operand(c.maxima, 0, c.rows * 4)});
      k.param = scale;
      k.scale = fp8_ ? cx_.graph.numerics.attention_scale : 0;
      cx_.add_call(std::move(k));
    }
  }

  // All-gather of the row maxima inside each (head, query block) group, and V.
  void share_maxima_and_gather_v() {
    std::vector<Need> v_needs;
    for (Cell& c : cells_) {
      c.gathered = cx_.allocate(c.tile, op_.name + ".maxima", AllocationKind::scratch, kbs_ * c.rows * 4, RegionNeed::any);
      c.v = cx_.allocate(c.tile, op_.name + ".v", AllocationKind::activation, c.keys * d_ * esize_, RegionNeed::any);
      v_needs.push_back(Need{c.tile, c.v, 0, c.image * keys_ + c.j0, c.keys, op_.v_col + c.h * d_, d_});
    }
    std::vector<Transfer> moves;
    for (const Cell& c : cells_) {
      Transfer t;
      t.source = Endpoint{c.tile, c.maxima, 0};
      t.bytes = c.rows * 4;
      for (std::uint32_t kb = 0; kb < kbs_; ++kb)
        t.destinations.push_back(
            Endpoint{at(c.image, c.h, c.qb, kb).tile, at(c.image, c.h, c.qb, kb).gathered, c.kb * c.rows * 4});
      moves.push_back(std::move(t));
    }
    plan_transfers(kv_, v_needs, moves);
    cx_.add_transfers(std::move(moves));
  }

  void emit_values() {
    for (Cell& c : cells_) {
      c.partial = cx_.allocate(c.tile, op_.name + ".partial", AllocationKind::activation, c.rows * (d_ + 1) * 4,
                               RegionNeed::any);
      KernelCall k = kernel_call(fp8_ ? KernelKind::attention_values_fp8 : KernelKind::attention_values, c.tile,
                                 {{Dim::queries, c.rows}, {Dim::keys, c.keys}, {Dim::head_dim, d_}, {Dim::key_blocks, kbs_}},
                                 {cx_.operand(c.scores, 0, c.rows * c.keys * 4), cx_.operand(c.gathered, 0, kbs_ * c.rows * 4),
                                  cx_.operand(c.v, 0, c.keys * d_ * esize_), cx_.operand(c.partial, 0, c.rows * (d_ + 1) * 4)});
      k.scale = fp8_ ? cx_.graph.numerics.attention_scale : 0;
      cx_.add_call(std::move(k));
    }
  }

  // Reduce-scatter of the partials: tile kb' of a group combines row sub-block kb'.
  void combine() {
    Distribution out{images_ * queries_, heads_ * d_, DType::f16, 0, {}};
    struct Combine {
      std::uint32_t tile, r0, rows, h, parts;
    };
    std::vector<Combine> combines;
    std::vector<Transfer> partial_moves;
    for (std::uint32_t b = 0; b < images_; ++b)
      for (std::uint32_t h = 0; h < heads_; ++h)
        for (std::uint32_t qb = 0; qb < qbs_; ++qb) {
          const Cell& head = at(b, h, qb, 0);
          std::vector<std::pair<std::uint32_t, std::uint32_t>> partials;
          for (std::uint32_t kb = 0; kb < kbs_; ++kb) partials.emplace_back(at(b, h, qb, kb).tile, at(b, h, qb, kb).partial);
          for (const auto& part : scatter_rows(cx_, op_.name + ".partials", partials, head.rows, (d_ + 1) * 4, partial_moves))
            combines.push_back(Combine{part.tile, b * queries_ + head.r0 + part.row0, part.rows, h, part.parts});
        }
    cx_.add_transfers(std::move(partial_moves));
    for (const Combine& cb : combines) {
      const std::uint32_t o = cx_.allocate(cb.tile, op_.name + ".out", AllocationKind::activation, cb.rows * d_ * 2,
                                           RegionNeed::any);
      cx_.add_call(kernel_call(KernelKind::attention_combine, cb.tile,
                        {{Dim::rows, cb.rows}, {Dim::head_dim, d_}, {Dim::key_blocks, kbs_}},
                        {cx_.operand(cb.parts, 0, cb.rows * (d_ + 1) * 4 * kbs_), cx_.operand(o, 0, cb.rows * d_ * 2)}));
      out.blocks.push_back(Block{cb.r0, cb.rows, cb.h * d_, d_, cb.tile, o, 0});
    }
    cx_.set_dist(op_.output, std::move(out));
  }

  LoweringContext& cx_;
  const Op& op_;
  const bool fp8_;
  const std::uint32_t esize_;  // bytes per Q, K, V element
  const Distribution qkv8_;    // the F143 QKV (FP8 products only)
  const Distribution& q_;
  const Distribution& kv_;
  const std::uint32_t images_, d_, heads_, queries_, keys_;
  const AttentionGrid grid_;
  const std::uint32_t qbs_, kbs_, first_tile_;
  std::vector<Cell> cells_;
};

}  // namespace

void lower_attention(LoweringContext& cx, const Op& op) { AttentionLowering(cx, op).lower(); }

}  // namespace tilevit::compiler
