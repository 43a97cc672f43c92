#include "compiler/plan_proposals.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "support/error.hpp"

namespace tilevit::compiler {
namespace {

std::int64_t delta(std::uint64_t to, std::uint64_t from, std::uint32_t executions) {
  return (static_cast<std::int64_t>(to) - static_cast<std::int64_t>(from)) * executions;
}

// The op that reads the output of ops[i] through element-wise ops (bias, GELU, cast keep
// their input's blocks): nullptr when another kind of op (a residual, a LayerNorm) reads it.
const Op* block_consumer(const std::vector<Op>& ops, std::size_t i) {
  int tensor = ops[i].output;
  for (std::size_t j = i + 1; j < ops.size(); ++j) {
    const Op& op = ops[j];
    const bool reads = !op.inputs.empty() && op.inputs[0] == tensor;
    if (op.kind == OpKind::attention && (reads || (op.inputs.size() > 1 && op.inputs[1] == tensor))) return &op;
    if (!reads) continue;
    if (op.kind == OpKind::gemm) return &op;
    if (op.kind != OpKind::bias_add && op.kind != OpKind::gelu && op.kind != OpKind::cast_fp8) return nullptr;
    tensor = op.output;
  }
  return nullptr;
}

GemmShape gemm_shape(const Graph& graph, const Op& op) {
  const Tensor& w = graph.tensor(op.inputs[1]);
  return GemmShape{graph.tensor(op.inputs[0]).rows, w.rows, w.cols, graph.numerics.role(op.role).fp8};
}

}  // namespace

std::vector<std::uint32_t> stream_word_ladder() {
  // Fine steps near 1,024: on the scheduled exchange the cycles are not monotonic in W
  // (the 8-step plan of the main job: 512 9,809,001, 768 9,663,069, 832 9,770,417, 896
  // 9,655,315, 1,024 9,940,126, 2,048 and up slower; docs/experiments/plan-search-levers.md).
  return {256, 384, 512, 640, 768, 896, 1024, 1280, 1536, 2048, 4096, 16384, 1u << 20};
}

Proposals::Proposals(const Graph& graph, const target::MachineDescription& machine, const ProposalLimits& limits)
    : machine_(machine), per_op_(limits.per_op) {
  auto add_ops = [&](const std::vector<Op>& ops, std::uint32_t executions) {
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      OpChoices c{Lever::gemm_grid, op.name, executions, {}, 0, 0, 0, 0, machine.tiles, {}, {}, {}, 0, false};
      if (op.kind == OpKind::gemm) {
        c.gemm = gemm_shape(graph, op);
        if (const Op* consumer = block_consumer(ops, i)) {
          // Heads start at multiples of head_dim in the QKV columns, so head blocks align.
          const bool heads_align = consumer->kind == OpKind::attention && consumer->head_dim % 4 == 0 &&
                                   consumer->q_col % consumer->head_dim == 0 &&
                                   consumer->k_col % consumer->head_dim == 0 && consumer->v_col % consumer->head_dim == 0;
          if (heads_align) c.consumer_head_dim = consumer->head_dim;
          if (consumer->kind == OpKind::gemm) {
            c.consumer_gemm = consumer->name;
            c.consumer_shape = gemm_shape(graph, *consumer);
          }
        }
        screen_gemm(c);
      } else if (op.kind == OpKind::attention) {
        // The shapes lowering gives the op (lower_ops.cpp, AttentionLowering).
        const std::uint32_t images = std::max(1u, op.images);
        c.lever = Lever::attention_blocks;
        c.queries = op.shared_query ? graph.tensor(op.inputs[0]).rows : graph.tensor(op.inputs[0]).rows / images;
        c.keys = graph.tensor(op.inputs[1]).rows / images;
        c.head_dim = op.head_dim;
        c.heads = op.heads;
        c.tiles = std::max(1u, machine.tiles / images);
        c.fp8_capable = op.attention_use == AttentionUse::encoder && op.inputs[0] == op.inputs[1] && op.head_dim % 4 == 0;
        screen_attention(c, machine.free_bytes_per_tile(limits.profiling));
      } else if (op.kind == OpKind::layernorm && op.norm_use != NormUse::other) {
        const auto norms = std::find_if(ops_.begin(), ops_.end(), [](const OpChoices& o) { return o.lever == Lever::split_norm; });
        if (norms != ops_.end()) {
          norms->name += "+" + op.name;
          continue;
        }
        c.lever = Lever::split_norm;
      } else if (op.kind == OpKind::gelu && op.activation == model::Activation::gelu_tanh && i + 1 < ops.size() &&
                 ops[i + 1].kind == OpKind::cast_fp8 && ops[i + 1].inputs[0] == op.output) {
        c.lever = Lever::fp8_output;
      } else {
        continue;
      }
      ops_.push_back(std::move(c));
    }
  };
  add_ops(graph.prologue, 1);
  add_ops(graph.body, std::max(1u, graph.loop_count));
  add_ops(graph.epilogue, 1);
  find_norm_partners(graph);
}

void Proposals::find_norm_partners(const Graph& graph) {
  const auto norm = std::find_if(graph.body.begin(), graph.body.end(),
                                 [](const Op& op) { return op.norm_use == NormUse::encoder_attention; });
  if (norm == graph.body.end()) return;
  for (auto op = norm; op != graph.body.end(); ++op)
    if (op->kind == OpKind::gemm) {
      norm_consumer_gemm_ = op->name, norm_consumer_shape_ = gemm_shape(graph, *op);
      break;
    }
  // Back from the LayerNorm's input through in-place element-wise ops (their left operand).
  int tensor = norm->inputs[0];
  for (auto op = graph.prologue.rbegin(); op != graph.prologue.rend(); ++op) {
    if (op->output != tensor) continue;
    if (op->kind == OpKind::gemm) {
      residual_gemm_ = op->name, residual_shape_ = gemm_shape(graph, *op);
      return;
    }
    if (op->kind != OpKind::bias_add && op->kind != OpKind::add && op->kind != OpKind::scale_columns) return;
    tensor = op->inputs[0];
  }
}

std::optional<GemmSplits> Proposals::matched_residual_grid(const PlanPins& pins) const {
  if (residual_gemm_.empty() || norm_consumer_gemm_.empty()) return std::nullopt;
  const GemmGrid next = plan_gemm_grid(machine_, norm_consumer_shape_, machine_.tiles, pins, norm_consumer_gemm_);
  const std::uint32_t quantum = next.k_splits > 1 ? next.k_block : residual_shape_.columns;
  if (quantum % 4 != 0) return std::nullopt;
  std::optional<GemmGrid> best;
  for_each_gemm_grid(machine_, residual_shape_, machine_.tiles, [&](const GemmGrid& g) {
    // Most tiles first (the more parts, the smaller each tile's share), then the estimate.
    if (!best || std::make_tuple(-std::int64_t(g.tiles()), g.estimated_cycles) <
                     std::make_tuple(-std::int64_t(best->tiles()), best->estimated_cycles))
      best = g;
  }, quantum);
  if (!best) return std::nullopt;
  return GemmSplits{best->r_splits, best->k_splits, best->c_splits, quantum < residual_shape_.columns ? quantum : 0};
}

void Proposals::screen_gemm(OpChoices& op) {
  std::vector<GemmGrid> grids;
  for_each_gemm_grid(machine_, op.gemm, machine_.tiles, [&](const GemmGrid& g) { grids.push_back(g); });
  screened_ += grids.size();
  // Lowest estimate first; among equals the grid on more tiles (more homes for weights).
  std::stable_sort(grids.begin(), grids.end(), [](const GemmGrid& a, const GemmGrid& b) {
    return std::make_tuple(a.estimated_cycles, -std::int64_t(a.tiles())) <
           std::make_tuple(b.estimated_cycles, -std::int64_t(b.tiles()));
  });
  // One more than asked: the current grid is usually among them and is skipped.
  for (std::size_t i = 0; i < grids.size() && i < per_op_ + 1u; ++i) {
    Move m{Lever::gemm_grid, op.name, GemmSplits{grids[i].r_splits, grids[i].k_splits, grids[i].c_splits}, {}, 0,
           static_cast<std::int64_t>(grids[i].estimated_cycles)};
    op.alternatives.push_back(m);
  }
}

void Proposals::screen_attention(OpChoices& op, std::uint64_t max_tile_bytes) {
  std::vector<AttentionGrid> grids;
  for_each_attention_grid(machine_, op.queries, op.keys, op.head_dim, op.heads, op.tiles,
                          [&](const AttentionGrid& g, std::uint64_t bytes) {
                            ++screened_;
                            // A working set larger than a tile's free memory cannot be placed.
                            if (bytes <= max_tile_bytes) grids.push_back(g);
                          });
  std::stable_sort(grids.begin(), grids.end(),
                   [](const AttentionGrid& a, const AttentionGrid& b) { return a.estimated_cycles < b.estimated_cycles; });
  for (std::size_t i = 0; i < grids.size() && i < per_op_ + 1u; ++i)
    op.alternatives.push_back(Move{Lever::attention_blocks, op.name, {},
                                   AttentionBlocks{grids[i].query_block, grids[i].key_block}, 0,
                                   static_cast<std::int64_t>(grids[i].estimated_cycles)});
}

// The local estimate of the op's grid in `pins` (the pin's own estimate, as lowering
// computes it); alternatives' estimates are stored in their estimated_delta until used.
std::uint64_t Proposals::current_estimate(const OpChoices& op, const PlanPins& pins) const {
  if (op.lever == Lever::gemm_grid) return plan_gemm_grid(machine_, op.gemm, op.tiles, pins, op.name).estimated_cycles;
  return plan_attention_grid(machine_, op.queries, op.keys, op.head_dim, op.heads, op.tiles, pins, op.name)
      .estimated_cycles;
}

std::uint32_t Proposals::consumer_block(const OpChoices& op, const PlanPins& pins) const {
  if (op.consumer_head_dim != 0) return op.consumer_head_dim;
  if (op.consumer_gemm.empty()) return 0;
  const GemmGrid next = plan_gemm_grid(machine_, op.consumer_shape, op.tiles, pins, op.consumer_gemm);
  // One K block covers the whole inner dimension: the consumer reads whole rows anyway.
  return next.k_splits > 1 && next.k_block % 4 == 0 ? next.k_block : 0;
}

// The grids of `op` whose column blocks are its consumer's blocks in `plan`, best local
// estimate first. The estimate cannot see what they save (the consumer's gather becomes
// one run per block instead of one per row), so they are unmeasured proposals ranked
// before every estimated one, ops run more often first (gap -executions, then their
// order), each worth one try.
void Proposals::add_layout_moves(const OpChoices& op, const Plan& plan, std::vector<Move>& moves) const {
  const std::uint32_t quantum = consumer_block(op, plan.pins);
  if (quantum == 0 || quantum >= op.gemm.columns) return;
  std::vector<GemmGrid> grids;
  for_each_gemm_grid(machine_, op.gemm, op.tiles, [&](const GemmGrid& g) { grids.push_back(g); }, quantum);
  std::stable_sort(grids.begin(), grids.end(), [](const GemmGrid& a, const GemmGrid& b) {
    return std::make_tuple(a.estimated_cycles, -std::int64_t(a.tiles())) <
           std::make_tuple(b.estimated_cycles, -std::int64_t(b.tiles()));
  });
  const auto current = plan.pins.gemm.find(op.name);
  std::uint32_t kept = 0;
  for (std::size_t i = 0; i < grids.size() && kept < per_op_; ++i) {
    const GemmGrid& g = grids[i];
    Move m{Lever::layout_match, op.name, GemmSplits{g.r_splits, g.k_splits, g.c_splits, quantum}, {}, 0, 0, 0, false};
    if (current != plan.pins.gemm.end() && move_value(m) == splits_text(current->second)) continue;
    // The best matched grid of a loop-body op first; the others after the tile offsets.
    m.estimated_gap = i == 0 && op.executions > 1 ? -double(op.executions) : -0.45 + 0.01 * double(i);
    ++kept;
    moves.push_back(std::move(m));
  }
}

// First tiles for the ops of the loop body at a half, a quarter and three quarters of
// the chip (measured on the main job: QKV at 729 -24,489 cycles, fc1 at 700 -52,380;
// docs/experiments/plan-search-levers.md), and back to 0. Unmeasured and not estimated:
// ranked after the layout matches, before every estimated move.
void Proposals::add_offset_moves(const OpChoices& op, const Plan& plan, std::vector<Move>& moves) const {
  if (op.executions < 2) return;  // the prologue's and epilogue's ops run once
  const auto it = plan.pins.tile_offsets.find(op.name);
  const std::uint32_t now = it == plan.pins.tile_offsets.end() ? 0 : it->second;
  const std::uint32_t tiles = machine_.tiles;
  double rank = 0;
  for (std::uint32_t first : {tiles / 2, tiles / 4, tiles - tiles / 4, 0u}) {
    if (first == now || first >= tiles) continue;
    Move m{Lever::tile_offset, op.name, {}, {}, 0, 0, -0.5 + 0.01 * rank++, false};
    m.tile_offset = first;
    moves.push_back(std::move(m));
  }
}

// FP8 attention products on or off (PlanPins::fp8_attention). Not estimated locally (it
// halves Q, K and V's exchange bytes, which the local estimate does not see): ranked with
// the best layout matches, by executions, each direction worth one try.
void Proposals::add_fp8_attention_move(const OpChoices& op, const Plan& plan, std::vector<Move>& moves) const {
  if (!op.fp8_capable) return;
  Move m{Lever::fp8_attention, op.name, {}, {}, 0, 0, -0.505, false};
  m.fp8 = !plan.pins.fp8_attention.contains(op.name);
  moves.push_back(std::move(m));
}

// The encoder's LayerNorms split (or back on whole rows), or a GELU with FP8 output (or
// not). Neither has a local estimate (the split trades the rows' gather for a small
// exchange of moments; the fused GELU is cheaper per element than the GELU and the cast,
// both measured): unmeasured moves, each worth one try.
void Proposals::add_toggle_move(const OpChoices& op, const Plan& plan, std::vector<Move>& moves) const {
  // The split after the loop body's layout matches and W's one-wave end (-0.6): ranked
  // first it used up the default 8 steps before W 2^20, the larger gain (docs/OPTIMISER.md,
  // "After the merge with FP8 attention"). The FP8-output GELU (about 1,200 cycles per
  // layer) after the nearest W values and the tile offsets.
  const double gap = op.lever == Lever::split_norm ? -0.58 : -0.3;
  Move m{op.lever, op.name, {}, {}, 0, 0, gap, false};
  Move on = m;
  on.enabled = true;
  m.enabled = lever_value(plan, m) != move_value(on);
  // Splitting pays only when the parts are whole runs of the consumer's K blocks: the
  // residual's layout changes with it unless it already matches.
  if (op.lever == Lever::split_norm && m.enabled)
    if (const std::optional<GemmSplits> grid = matched_residual_grid(plan.pins)) {
      const auto now = plan.pins.gemm.find(residual_gemm_);
      if (now == plan.pins.gemm.end() || splits_text(now->second) != splits_text(*grid)) m.layout_op = residual_gemm_, m.gemm = *grid;
    }
  moves.push_back(std::move(m));
}

std::vector<Move> Proposals::moves_from(const Plan& plan) const {
  std::vector<Move> moves;
  for (const OpChoices& op : ops_) {
    if (op.lever == Lever::split_norm || op.lever == Lever::fp8_output) {
      add_toggle_move(op, plan, moves);
      continue;
    }
    if (op.lever == Lever::gemm_grid) add_layout_moves(op, plan, moves);
    if (op.lever == Lever::attention_blocks) add_fp8_attention_move(op, plan, moves);
    add_offset_moves(op, plan, moves);
    if (op.alternatives.empty()) continue;
    const std::uint64_t current = current_estimate(op, plan.pins);
    const std::string now = lever_value(plan, op.alternatives[0]);
    std::uint32_t kept = 0;
    for (const Move& alt : op.alternatives) {
      if (move_value(alt) == now) continue;
      if (kept == per_op_) break;
      Move m = alt;
      m.estimated_delta = delta(static_cast<std::uint64_t>(alt.estimated_delta), current, op.executions);
      m.estimated_gap = current ? double(m.estimated_delta) / op.executions / double(current) : 0.0;
      moves.push_back(std::move(m));
      ++kept;
    }
  }
  // W has no local estimate and the scheduled exchange's cycles are not monotonic in it:
  // every other W is worth a try: the ladder's top first (gap -0.6), then the two nearest
  // (-0.55, -0.5), the finest waves and the rest, interleaved with the tile offsets and
  // the other layout matches (-0.45 and up).
  std::vector<std::uint32_t> ladder = stream_word_ladder();
  const double now = std::log2(double(plan.exchange_stream_words));
  std::stable_sort(ladder.begin(), ladder.end(), [&](std::uint32_t a, std::uint32_t b) {
    return std::abs(std::log2(double(a)) - now) < std::abs(std::log2(double(b)) - now);
  });
  // The far ends of the ladder: with cycles not monotonic in W, a budget of a few
  // candidates should sample both ends, not only the neighbourhood. One wave per phase
  // first of all: the packing scheduler made it the fastest on the main job, the largest
  // single gain (-864 K at 8 steps), which the structural levers otherwise crowd out.
  if (ladder.size() > 4) {
    const auto [lo, hi] = std::minmax_element(ladder.begin() + 2, ladder.end());
    const std::uint32_t ends[2] = {*hi, *lo};
    ladder.erase(std::remove_if(ladder.begin() + 2, ladder.end(),
                                [&](std::uint32_t w) { return w == ends[0] || w == ends[1]; }),
                 ladder.end());
    ladder.insert(ladder.begin() + 2, ends[1]);
    ladder.insert(ladder.begin(), ends[0]);
  }
  double rank = 0;
  for (std::uint32_t w : ladder)
    if (w != plan.exchange_stream_words)
      moves.push_back(Move{Lever::stream_words, "", {}, {}, w, 0, -0.6 + 0.05 * rank++, false});
  return moves;
}

}  // namespace tilevit::compiler
