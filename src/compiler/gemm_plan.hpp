#pragma once
// How one GEMM is spread over tiles: the weights stay where they live (each weight
// element on exactly one tile, no replication), the inner dimension is split Kg ways and
// the output columns Cg ways; tile (kb, cb) computes all rows x its K block x its C
// block. With Kg > 1 the partial sums are reduce-scattered by rows. The grid is the one
// with the lowest estimated time (kernel cost model + receive-bound exchange) among those
// using at least `min_tiles` tiles, so every weight byte has a home.
#include <cstdint>

#include "target/machine.hpp"

namespace tilevit::compiler {

struct GemmGrid {
  std::uint32_t k_splits = 1, c_splits = 1;  // Kg, Cg
  std::uint32_t k_block = 0, c_block = 0;    // elements per block (last may be shorter)
  std::uint64_t estimated_cycles = 0;
  std::uint32_t tiles() const { return k_splits * c_splits; }
};

struct GemmShape {
  std::uint32_t rows = 0, inner = 0, columns = 0;
  bool fp8 = true;
};

// k_block is a multiple of the matrix unit's panel depth and c_block of its panel width
// (except the last blocks); both keep exchange runs whole 32-bit words.
GemmGrid choose_gemm_grid(const target::MachineDescription& machine, const GemmShape& shape, std::uint32_t tiles,
                          std::uint32_t min_tiles);

std::uint64_t estimate_gemm_cycles(const target::MachineDescription& machine, const GemmShape& shape,
                                   std::uint32_t k_block, std::uint32_t c_block, std::uint32_t k_splits);

}  // namespace tilevit::compiler
