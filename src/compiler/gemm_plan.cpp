#include "compiler/gemm_plan.hpp"

#include <algorithm>
#include <functional>

#include "support/error.hpp"
#include "target/kernel_costs.hpp"

namespace tilevit::compiler {
namespace {
std::uint32_t ceil_div(std::uint32_t a, std::uint32_t b) { return (a + b - 1) / b; }
std::uint32_t round_up(std::uint32_t a, std::uint32_t b) { return ceil_div(a, b) * b; }

// The block that cuts `extent` into `splits` pieces, a multiple of `quantum` (the last
// piece may be shorter); 0 when that leaves fewer pieces (the blocks of a smaller split).
std::uint32_t block_for(std::uint32_t extent, std::uint32_t splits, std::uint32_t quantum) {
  const std::uint32_t block = std::min(extent, round_up(ceil_div(extent, splits), quantum));
  return ceil_div(extent, block) == splits ? block : 0;
}

std::uint32_t inner_quantum(const target::MachineDescription& m, bool fp8) {
  return fp8 ? m.costs.gemm_fp8.panel_inner : m.costs.gemm_fp16.panel_inner;
}
std::uint32_t column_quantum(const target::MachineDescription& m, bool fp8) {
  return fp8 ? m.costs.gemm_fp8.panel_columns : m.costs.gemm_fp16.panel_columns;
}

[[noreturn]] void reject_pin(const std::string& what, const std::string& op_name, const std::string& why) {
  throw RefusedPin("pinned " + what + " for op " + op_name + ": " + why);
}
}  // namespace

std::uint64_t estimate_gemm_cycles(const target::MachineDescription& m, const GemmShape& s, std::uint32_t r_block,
                                   std::uint32_t r_splits, std::uint32_t k_block, std::uint32_t c_block,
                                   std::uint32_t k_splits) {
  const auto precision = s.fp8 ? target::Precision::fp8 : target::Precision::fp16;
  const std::uint32_t esize = s.fp8 ? 1 : 2;
  std::uint64_t cycles = target::gemm_cycles(m, precision, r_block, k_block, c_block);
  // The left operand block, and the weight block when it is shared by Rg > 1 tiles,
  // arrive through the exchange (receive-bound).
  std::uint64_t received = std::uint64_t(r_block) * k_block * esize;
  if (r_splits > 1) received += std::uint64_t(k_block) * c_block * esize;
  cycles += m.exchange_cycles(received) + m.phase_overhead_cycles;
  if (k_splits > 1) {
    const std::uint64_t row_block = ceil_div(r_block, k_splits);
    cycles += m.exchange_cycles((k_splits - 1) * row_block * c_block * 2) + m.phase_overhead_cycles;
    cycles += target::reduce_add_cycles(m, row_block * c_block, k_splits);
  }
  return cycles;
}

void for_each_gemm_grid(const target::MachineDescription& m, const GemmShape& s, std::uint32_t tiles,
                        const std::function<void(const GemmGrid&)>& visit, std::uint32_t quantum) {
  const std::uint32_t k_quantum = inner_quantum(m, s.fp8), c_quantum = quantum ? quantum : column_quantum(m, s.fp8);
  const std::uint32_t min_c = quantum ? ceil_div(s.columns, quantum) : 1;
  const std::uint32_t max_k = std::max(1u, ceil_div(s.inner, k_quantum));
  for (std::uint32_t rg = 1; rg <= std::min(s.rows, tiles); ++rg) {
    const std::uint32_t r_block = block_for(s.rows, rg, 1);
    if (r_block == 0) continue;
    for (std::uint32_t kg = 1; kg <= std::min(max_k, tiles / rg); ++kg) {
      const std::uint32_t k_block = block_for(s.inner, kg, k_quantum);
      if (k_block == 0) continue;
      const std::uint32_t max_c = std::min(ceil_div(s.columns, c_quantum), tiles / (rg * kg));
      for (std::uint32_t cg = min_c; cg <= max_c && (quantum == 0 || cg == min_c); ++cg) {
        const std::uint32_t c_block = block_for(s.columns, cg, c_quantum);
        if (c_block == 0) continue;
        visit(GemmGrid{rg, kg, cg, r_block, k_block, c_block, estimate_gemm_cycles(m, s, r_block, rg, k_block, c_block, kg),
                       quantum});
      }
    }
  }
}

std::uint64_t gemm_tile_bytes(const GemmShape& s, const GemmGrid& g, std::uint32_t layers) {
  const std::uint64_t esize = s.fp8 ? 1 : 2;
  const std::uint64_t a_block = std::uint64_t(g.r_block) * g.k_block * esize;
  const std::uint64_t w_block = std::uint64_t(g.k_block) * g.c_block * esize;
  const std::uint64_t partial = std::uint64_t(g.r_block) * g.c_block * 2;
  const std::uint64_t resident = g.r_splits > 1 ? std::uint64_t(ceil_div(g.k_block, g.r_splits)) * g.c_block * esize : w_block;
  const std::uint64_t computing = a_block + (g.r_splits > 1 ? w_block : 0) + partial;
  const std::uint64_t reducing = g.k_splits > 1 ? 2 * partial : 0;
  return resident * layers + std::max(computing, reducing);
}

GemmGrid choose_gemm_grid(const target::MachineDescription& m, const GemmShape& s, std::uint32_t tiles,
                          std::uint32_t min_tiles, const GemmMemoryCap& cap) {
  GemmGrid best;
  std::uint64_t best_over = 0;  // bytes over the cap (0: within it)
  bool found = false;
  const std::uint32_t panels =
      ceil_div(s.inner, inner_quantum(m, s.fp8)) * ceil_div(s.columns, column_quantum(m, s.fp8)) * s.rows;
  for_each_gemm_grid(m, s, tiles, [&](const GemmGrid& g) {
    if (g.tiles() < std::min(min_tiles, panels)) return;
    const std::uint64_t bytes = cap.tile_bytes == 0 ? 0 : gemm_tile_bytes(s, g, cap.layers);
    const std::uint64_t over = bytes > cap.tile_bytes ? bytes - cap.tile_bytes : 0;
    if (!found || over < best_over ||
        (over == best_over && (g.estimated_cycles < best.estimated_cycles ||
                               (g.estimated_cycles == best.estimated_cycles && g.tiles() < best.tiles())))) {
      best = g;
      best_over = over;
      found = true;
    }
  });
  if (!found)
    throw Error("compiler: no grid for a GEMM of " + std::to_string(s.rows) + "x" + std::to_string(s.inner) + "x" +
                    std::to_string(s.columns) + " on " + std::to_string(tiles) + " tiles",
                kExitInternal);
  return best;
}

GemmGrid plan_gemm_grid(const target::MachineDescription& m, const GemmShape& s, std::uint32_t tiles,
                        const PlanPins& pins, const std::string& op_name, const GemmMemoryCap& cap) {
  const auto pin = pins.gemm.find(op_name);
  if (pin == pins.gemm.end()) {
    for (std::uint32_t min_tiles = tiles - tiles / 4;; min_tiles /= 2) {
      try {
        return choose_gemm_grid(m, s, tiles, min_tiles, cap);
      } catch (const Error&) {
        if (min_tiles <= 1) throw;
      }
    }
  }
  const GemmSplits& splits = pin->second;
  const std::string what = "GEMM grid " + std::to_string(splits.r) + "x" + std::to_string(splits.k) + "x" +
                           std::to_string(splits.c) + " (row x inner x column splits)";
  // Exchange runs stay whole 32-bit words: FP8 weight rows and FP16 output rows of a block.
  if (splits.column_quantum != 0 && splits.column_quantum % 4 != 0)
    reject_pin(what, op_name, "column quantum " + std::to_string(splits.column_quantum) + " is not a multiple of 4");
  auto block = [&](const char* name, std::uint32_t extent, std::uint32_t parts, std::uint32_t quantum) {
    const std::uint32_t b = parts == 0 || parts > extent ? 0 : block_for(extent, parts, quantum);
    if (b == 0)
      reject_pin(what, op_name, std::string(name) + " (" + std::to_string(extent) + ") cannot be cut into " +
                                    std::to_string(parts) + " blocks" +
                                    (quantum > 1 ? " of whole " + std::to_string(quantum) + "-element panels" : ""));
    return b;
  };
  GemmGrid grid{splits.r, splits.k, splits.c, block("rows", s.rows, splits.r, 1),
                block("inner dimension", s.inner, splits.k, inner_quantum(m, s.fp8)),
                block("columns", s.columns, splits.c,
                      splits.column_quantum != 0 ? splits.column_quantum : column_quantum(m, s.fp8)),
                0, splits.column_quantum};
  const std::uint64_t needed = std::uint64_t(splits.r) * splits.k * splits.c;
  if (needed > tiles)
    reject_pin(what, op_name, "needs " + std::to_string(needed) + " tiles, the machine has " + std::to_string(tiles));
  grid.estimated_cycles =
      estimate_gemm_cycles(m, s, grid.r_block, grid.r_splits, grid.k_block, grid.c_block, grid.k_splits);
  return grid;
}

}  // namespace tilevit::compiler

namespace tilevit::compiler {

std::uint64_t attention_tile_bytes(std::uint32_t qr, std::uint32_t kn, std::uint32_t d, std::uint32_t kbs) {
  return std::uint64_t(qr) * d * 2 + 2ull * kn * d * 2 + std::uint64_t(qr) * kn * 4 + std::uint64_t(qr) * (d + 1) * 4 * 2 +
         std::uint64_t(kbs) * qr * 4;
}

std::uint64_t estimate_attention_cycles(const target::MachineDescription& m, std::uint32_t qr, std::uint32_t kn,
                                        std::uint32_t d, std::uint32_t kbs) {
  const std::uint32_t sub = ceil_div(qr, kbs);
  std::uint64_t cycles = target::gemm_cycles(m, target::Precision::fp16, qr, d, kn) + target::add_cycles(m, qr * kn) +
                         target::softmax_cycles(m, qr, kn) + target::gemm_cycles(m, target::Precision::fp16, qr, kn, d) +
                         target::reduce_add_cycles(m, std::uint64_t(sub) * (d + 1), kbs);
  const std::uint64_t received = std::uint64_t(qr) * d * 2 + 2ull * kn * d * 2 + std::uint64_t(kbs) * qr * 4 +
                                 std::uint64_t(kbs - 1) * sub * (d + 1) * 4;
  return cycles + m.exchange_cycles(received) + 3ull * m.phase_overhead_cycles;
}

void for_each_attention_grid(const target::MachineDescription& m, std::uint32_t queries, std::uint32_t keys,
                             std::uint32_t d, std::uint32_t heads, std::uint32_t tiles,
                             const std::function<void(const AttentionGrid&, std::uint64_t tile_bytes)>& visit) {
  const std::uint32_t per_head = std::max(1u, tiles / heads);
  for (std::uint32_t qbs = 1; qbs <= std::min(queries, per_head); ++qbs) {
    const std::uint32_t qr = block_for(queries, qbs, 1);
    if (qr == 0) continue;
    for (std::uint32_t kbs = 1; kbs <= std::min(keys, per_head / qbs); ++kbs) {
      const std::uint32_t kn = block_for(keys, kbs, 1);
      if (kn == 0) continue;
      visit(AttentionGrid{qr, kn, estimate_attention_cycles(m, qr, kn, d, kbs)}, attention_tile_bytes(qr, kn, d, kbs));
    }
  }
}

AttentionGrid choose_attention_grid(const target::MachineDescription& m, std::uint32_t queries, std::uint32_t keys,
                                    std::uint32_t d, std::uint32_t heads, std::uint32_t tiles,
                                    std::uint32_t max_tile_bytes) {
  AttentionGrid best, smallest;
  bool found = false, found_small = false;
  std::uint64_t smallest_bytes = 0;
  for_each_attention_grid(m, queries, keys, d, heads, tiles, [&](const AttentionGrid& g, std::uint64_t bytes) {
    // Over the working-set cap: only as a last resort, the smallest one (placement then
    // reports the tile that cannot hold it).
    if (bytes > max_tile_bytes) {
      if (!found_small || bytes < smallest_bytes) {
        smallest = AttentionGrid{g.query_block, g.key_block, 0};
        smallest_bytes = bytes;
        found_small = true;
      }
      return;
    }
    const std::uint64_t tiles_used = std::uint64_t(ceil_div(queries, g.query_block)) * ceil_div(keys, g.key_block);
    if (!found || g.estimated_cycles < best.estimated_cycles ||
        (g.estimated_cycles == best.estimated_cycles &&
         tiles_used < ceil_div(queries, best.query_block) * ceil_div(keys, best.key_block))) {
      best = g;
      found = true;
    }
  });
  if (!found) {
    if (!found_small) throw Error("compiler: no attention grid for " + std::to_string(heads) + " heads", kExitInternal);
    return smallest;
  }
  return best;
}

AttentionGrid plan_attention_grid(const target::MachineDescription& m, std::uint32_t queries, std::uint32_t keys,
                                  std::uint32_t d, std::uint32_t heads, std::uint32_t tiles, const PlanPins& pins,
                                  const std::string& op_name) {
  const auto pin = pins.attention.find(op_name);
  if (pin == pins.attention.end()) return choose_attention_grid(m, queries, keys, d, heads, tiles);
  const AttentionBlocks& blocks = pin->second;
  const std::string what = "attention blocks " + std::to_string(blocks.query_block) + "x" +
                           std::to_string(blocks.key_block) + " (queries x keys)";
  if (blocks.query_block == 0 || blocks.query_block > queries || blocks.key_block == 0 || blocks.key_block > keys)
    reject_pin(what, op_name, "blocks must be 1.." + std::to_string(queries) + " queries and 1.." +
                                  std::to_string(keys) + " keys");
  const std::uint32_t kbs = ceil_div(keys, blocks.key_block);
  const std::uint64_t per_head = std::uint64_t(ceil_div(queries, blocks.query_block)) * kbs;
  if (per_head > std::max(1u, tiles / heads))
    reject_pin(what, op_name, "needs " + std::to_string(per_head) + " tiles per head, " + std::to_string(heads) +
                                  " heads on " + std::to_string(tiles) + " tiles");
  return AttentionGrid{blocks.query_block, blocks.key_block,
                       estimate_attention_cycles(m, blocks.query_block, blocks.key_block, d, kbs)};
}

}  // namespace tilevit::compiler
