#pragma once
// How one GEMM is spread over tiles: rows split Rg ways, the inner dimension Kg ways and
// the output columns Cg ways; tile (rb, kb, cb) computes its row block x K block x C
// block. Every weight element has one home (no replication): the (kb, cb) weight block is
// cut into Rg row pieces homed on the Rg tiles that use it, and each call (each layer)
// multicasts the pieces so all Rg tiles hold the whole block (with Rg = 1 the block is
// simply resident). With Kg > 1 the partial sums are reduce-scattered by rows. The grid
// is the one with the lowest estimated time (kernel cost model + receive-bound exchange)
// among those using at least `min_tiles` tiles.
#include <cstdint>

#include "target/machine.hpp"

namespace tilevit::compiler {

struct GemmGrid {
  std::uint32_t r_splits = 1, k_splits = 1, c_splits = 1;  // Rg, Kg, Cg
  std::uint32_t r_block = 0, k_block = 0, c_block = 0;     // elements per block (last may be shorter)
  std::uint64_t estimated_cycles = 0;
  std::uint32_t tiles() const { return r_splits * k_splits * c_splits; }
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
                                   std::uint32_t r_block, std::uint32_t r_splits, std::uint32_t k_block,
                                   std::uint32_t c_block, std::uint32_t k_splits);

}  // namespace tilevit::compiler

namespace tilevit::compiler {

// Attention of `heads` heads: query rows in blocks of query_block, keys in blocks of
// key_block, one tile per (head, query block, key block); the split with the lowest
// estimated time whose working set per tile stays under `max_tile_bytes`.
struct AttentionGrid {
  std::uint32_t query_block = 0, key_block = 0;
  std::uint64_t estimated_cycles = 0;
};
AttentionGrid choose_attention_grid(const target::MachineDescription& machine, std::uint32_t queries,
                                    std::uint32_t keys, std::uint32_t head_dim, std::uint32_t heads,
                                    std::uint32_t tiles, std::uint32_t max_tile_bytes = 128 * 1024);

}  // namespace tilevit::compiler
