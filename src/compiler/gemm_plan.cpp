#include "compiler/gemm_plan.hpp"

#include <algorithm>

#include "support/error.hpp"
#include "target/kernel_costs.hpp"

namespace tilevit::compiler {
namespace {
std::uint32_t ceil_div(std::uint32_t a, std::uint32_t b) { return (a + b - 1) / b; }
std::uint32_t round_up(std::uint32_t a, std::uint32_t b) { return ceil_div(a, b) * b; }
}  // namespace

std::uint64_t estimate_gemm_cycles(const target::MachineDescription& m, const GemmShape& s, std::uint32_t k_block,
                                   std::uint32_t c_block, std::uint32_t k_splits) {
  const auto precision = s.fp8 ? target::Precision::fp8 : target::Precision::fp16;
  const std::uint32_t esize = s.fp8 ? 1 : 2;
  std::uint64_t cycles = target::gemm_cycles(m, precision, s.rows, k_block, c_block);
  // The left operand block arrives through the exchange (receive-bound, 4 B/cycle).
  cycles += std::uint64_t(s.rows) * k_block * esize / m.exchange_receive_bytes_per_cycle + m.sync_cycles;
  if (k_splits > 1) {
    const std::uint64_t row_block = ceil_div(s.rows, k_splits);
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
  for (std::uint32_t kg = 1; kg <= std::min(max_k, tiles); ++kg) {
    const std::uint32_t k_block = std::min(s.inner, round_up(ceil_div(s.inner, kg), k_quantum));
    const std::uint32_t k_splits = ceil_div(s.inner, k_block);
    if (k_splits != kg) continue;  // this split is the same as a smaller one
    const std::uint32_t max_c = std::min(ceil_div(s.columns, c_quantum), tiles / kg);
    for (std::uint32_t cg = 1; cg <= max_c; ++cg) {
      const std::uint32_t c_block = std::min(s.columns, round_up(ceil_div(s.columns, cg), c_quantum));
      const std::uint32_t c_splits = ceil_div(s.columns, c_block);
      if (c_splits != cg) continue;
      if (kg * cg < std::min(min_tiles, ceil_div(s.inner, k_quantum) * ceil_div(s.columns, c_quantum))) continue;
      const std::uint64_t cycles = estimate_gemm_cycles(m, s, k_block, c_block, kg);
      if (!found || cycles < best.estimated_cycles ||
          (cycles == best.estimated_cycles && kg * cg < best.tiles())) {
        best = GemmGrid{kg, cg, k_block, c_block, cycles};
        found = true;
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
