#include "compiler/gemm_plan.hpp"

#include <algorithm>

#include "support/error.hpp"
#include "target/kernel_costs.hpp"

namespace tilevit::compiler {
namespace {
std::uint32_t ceil_div(std::uint32_t a, std::uint32_t b) { return (a + b - 1) / b; }
std::uint32_t round_up(std::uint32_t a, std::uint32_t b) { return ceil_div(a, b) * b; }
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
  cycles += received / m.exchange_receive_bytes_per_cycle + m.sync_cycles;
  if (k_splits > 1) {
    const std::uint64_t row_block = ceil_div(r_block, k_splits);
    cycles += (k_splits - 1) * row_block * c_block * 2 / m.exchange_receive_bytes_per_cycle + m.sync_cycles;
    cycles += target::reduce_add_cycles(m, row_block * c_block, k_splits);
  }
  return cycles;
}

GemmGrid choose_gemm_grid(const target::MachineDescription& m, const GemmShape& s, std::uint32_t tiles,
                          std::uint32_t min_tiles) {
  const bool fp8 = s.fp8;
  const std::uint32_t k_quantum = fp8 ? m.costs.gemm_fp8.panel_inner : m.costs.gemm_fp16.panel_inner;
  const std::uint32_t c_quantum = fp8 ? m.costs.gemm_fp8.panel_columns : m.costs.gemm_fp16.panel_columns;
  GemmGrid best;
  bool found = false;
  const std::uint32_t max_k = std::max(1u, ceil_div(s.inner, k_quantum));
  const std::uint32_t panels = ceil_div(s.inner, k_quantum) * ceil_div(s.columns, c_quantum) * s.rows;
  for (std::uint32_t rg = 1; rg <= std::min(s.rows, tiles); ++rg) {
    const std::uint32_t r_block = ceil_div(s.rows, rg);
    if (ceil_div(s.rows, r_block) != rg) continue;  // same blocks as a smaller Rg
    for (std::uint32_t kg = 1; kg <= std::min(max_k, tiles / rg); ++kg) {
      const std::uint32_t k_block = std::min(s.inner, round_up(ceil_div(s.inner, kg), k_quantum));
      if (ceil_div(s.inner, k_block) != kg) continue;
      const std::uint32_t max_c = std::min(ceil_div(s.columns, c_quantum), tiles / (rg * kg));
      for (std::uint32_t cg = 1; cg <= max_c; ++cg) {
        const std::uint32_t c_block = std::min(s.columns, round_up(ceil_div(s.columns, cg), c_quantum));
        if (ceil_div(s.columns, c_block) != cg) continue;
        if (rg * kg * cg < std::min(min_tiles, panels)) continue;
        const std::uint64_t cycles = estimate_gemm_cycles(m, s, r_block, rg, k_block, c_block, kg);
        if (!found || cycles < best.estimated_cycles ||
            (cycles == best.estimated_cycles && rg * kg * cg < best.tiles())) {
          best = GemmGrid{rg, kg, cg, r_block, k_block, c_block, cycles};
          found = true;
        }
      }
    }
  }
  if (!found)
    throw Error("compiler: no grid for a GEMM of " + std::to_string(s.rows) + "x" + std::to_string(s.inner) + "x" +
                    std::to_string(s.columns) + " on " + std::to_string(tiles) + " tiles",
                kExitInternal);
  return best;
}

}  // namespace tilevit::compiler

namespace tilevit::compiler {

AttentionGrid choose_attention_grid(const target::MachineDescription& m, std::uint32_t queries, std::uint32_t keys,
                                    std::uint32_t d, std::uint32_t heads, std::uint32_t tiles,
                                    std::uint32_t max_tile_bytes) {
  auto cdiv = [](std::uint32_t a, std::uint32_t b) { return (a + b - 1) / b; };
  AttentionGrid best, smallest;
  bool found = false, found_small = false;
  std::uint64_t smallest_bytes = 0;
  const std::uint32_t per_head = std::max(1u, tiles / heads);
  for (std::uint32_t qbs = 1; qbs <= std::min(queries, per_head); ++qbs) {
    const std::uint32_t qr = cdiv(queries, qbs);
    if (cdiv(queries, qr) != qbs) continue;
    for (std::uint32_t kbs = 1; kbs <= std::min(keys, per_head / qbs); ++kbs) {
      const std::uint32_t kn = cdiv(keys, kbs);
      if (cdiv(keys, kn) != kbs) continue;
      const std::uint64_t bytes = std::uint64_t(qr) * d * 2 + 2ull * kn * d * 2 + std::uint64_t(qr) * kn * 4 +
                                  std::uint64_t(qr) * (d + 1) * 4 * 2 + std::uint64_t(kbs) * qr * 4;
      // Over the working-set cap: only as a last resort, the smallest one (placement then
      // reports the tile that cannot hold it).
      if (bytes > max_tile_bytes) {
        if (!found_small || bytes < smallest_bytes) {
          smallest = AttentionGrid{qr, kn, 0};
          smallest_bytes = bytes;
          found_small = true;
        }
        continue;
      }
      const std::uint32_t sub = cdiv(qr, kbs);
      std::uint64_t cycles = target::gemm_cycles(m, target::Precision::fp16, qr, d, kn) + target::add_cycles(m, qr * kn) +
                             target::softmax_cycles(m, qr, kn) + target::gemm_cycles(m, target::Precision::fp16, qr, kn, d) +
                             target::reduce_add_cycles(m, std::uint64_t(sub) * (d + 1), kbs);
      const std::uint64_t received = std::uint64_t(qr) * d * 2 + 2ull * kn * d * 2 + std::uint64_t(kbs) * qr * 4 +
                                     std::uint64_t(kbs - 1) * sub * (d + 1) * 4;
      cycles += received / m.exchange_receive_bytes_per_cycle + 3ull * m.sync_cycles;
      if (!found || cycles < best.estimated_cycles ||
          (cycles == best.estimated_cycles && qbs * kbs < cdiv(queries, best.query_block) * cdiv(keys, best.key_block))) {
        best = AttentionGrid{qr, kn, cycles};
        found = true;
      }
    }
  }
  if (!found) {
    if (!found_small) throw Error("compiler: no attention grid for " + std::to_string(heads) + " heads", kExitInternal);
    return smallest;
  }
  return best;
}

}  // namespace tilevit::compiler
