#pragma once
// How one GEMM is spread over tiles: rows split Rg ways, the inner dimension Kg ways and
// the output columns Cg ways; tile (rb, kb, cb) computes its row block x K block x C
// block. Every weight element has one home (no replication): the (kb, cb) weight block is
// cut into Rg row pieces homed on the Rg tiles that use it, and each call (each layer)
// multicasts the pieces so all Rg tiles hold the whole block (with Rg = 1 the block is
// simply resident). With Kg > 1 the partial sums are reduce-scattered by rows. The grid
// is the one with the lowest estimated time (kernel cost model + receive-bound exchange)
// among those using at least `min_tiles` tiles, unless the caller pins one (PlanPins).
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "support/error.hpp"
#include "target/machine.hpp"

namespace tilevit::compiler {

struct GemmGrid {
  std::uint32_t r_splits = 1, k_splits = 1, c_splits = 1;  // Rg, Kg, Cg
  std::uint32_t r_block = 0, k_block = 0, c_block = 0;     // elements per block (last may be shorter)
  std::uint64_t estimated_cycles = 0;
  std::uint32_t column_quantum = 0;  // column blocks a multiple of this (0: the matrix unit's panel width)
  std::uint32_t tiles() const { return r_splits * k_splits * c_splits; }
};

struct GemmShape {
  std::uint32_t rows = 0, inner = 0, columns = 0;
  bool fp8 = true;
};

// A bound on the bytes one tile spends on one GEMM (gemm_tile_bytes), for a model that
// does not fit with the fastest grids (compile.hpp): 0 = none. `layers`: the weight's
// layer count (the loop count for a per-layer weight).
struct GemmMemoryCap {
  std::uint64_t tile_bytes = 0;
  std::uint32_t layers = 1;
};

// The bytes the first (fullest) tile of `grid` needs for the GEMM: its resident weight
// share for `layers` layers, plus the larger of the compute phase's working set (the
// gathered left-operand block, the weight block multicast to the Rg tiles when Rg > 1,
// the FP16 partial sums) and the reduce-scatter's (partial sums and received parts).
std::uint64_t gemm_tile_bytes(const GemmShape& shape, const GemmGrid& grid, std::uint32_t layers);

// k_block is a multiple of the matrix unit's panel depth and c_block of its panel width
// (except the last blocks); both keep exchange runs whole 32-bit words. Under a cap: the
// fastest grid within it, or the grid needing the fewest bytes when none is.
GemmGrid choose_gemm_grid(const target::MachineDescription& machine, const GemmShape& shape, std::uint32_t tiles,
                          std::uint32_t min_tiles, const GemmMemoryCap& cap = {});

// Every grid that covers the shape in whole panels on at most `tiles` tiles, with its
// estimate, in a fixed order (Rg, then Kg, then Cg ascending): what choose_gemm_grid picks
// from and the plan search (plan_search.hpp) screens. A `column_quantum` (GemmSplits)
// visits only the grids whose column blocks are that many columns.
void for_each_gemm_grid(const target::MachineDescription& machine, const GemmShape& shape, std::uint32_t tiles,
                        const std::function<void(const GemmGrid&)>& visit, std::uint32_t column_quantum = 0);

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
// Every split of `heads` heads on `tiles` tiles, with its estimate and working set per tile,
// in a fixed order (query blocks, then key blocks ascending).
void for_each_attention_grid(const target::MachineDescription& machine, std::uint32_t queries, std::uint32_t keys,
                             std::uint32_t head_dim, std::uint32_t heads, std::uint32_t tiles,
                             const std::function<void(const AttentionGrid&, std::uint64_t tile_bytes)>& visit);
// The two measures choose_attention_grid weighs for one tile of a (query_block x key_block)
// split with `key_blocks` blocks of keys: its working set and its estimated time.
std::uint64_t attention_tile_bytes(std::uint32_t query_block, std::uint32_t key_block, std::uint32_t head_dim,
                                   std::uint32_t key_blocks);
std::uint64_t estimate_attention_cycles(const target::MachineDescription& machine, std::uint32_t query_block,
                                        std::uint32_t key_block, std::uint32_t head_dim, std::uint32_t key_blocks);

// Grids fixed by the caller instead of chosen by estimate, keyed by graph op name
// ("layer.mlp.fc2", "layer.attention"; the loop body is lowered once, so a pin holds for
// every layer): tests pin a split the estimate would not pick, on a tiny model, instead
// of searching for a configuration that happens to reach it. Ops without a pin are
// planned as usual, so no pins leave every package byte for byte unchanged.
struct GemmSplits {
  std::uint32_t r = 1, k = 1, c = 1;  // Rg, Kg, Cg; the blocks follow as in choose_gemm_grid
  // Column blocks a multiple of this instead of the panel width (0): a layout matched to
  // the consumer (an attention head's columns, the next GEMM's K block), so the consumer
  // gathers whole blocks, one run per block, instead of one run per row. The kernel then
  // pays for whole panels (cost model), which the search weighs against the exchange.
  std::uint32_t column_quantum = 0;
  bool operator==(const GemmSplits&) const = default;
};
struct AttentionBlocks {
  std::uint32_t query_block = 0, key_block = 0;
};
// The compiler refuses a pin of a plan (an op the graph lacks, a grid or tile offset the
// machine cannot have, a lever on an op it does not apply to): the fault of whoever pinned
// it, so a plan file's reader names the file (job::with_plan_file_errors). what() is
// "compiler: " + why() for a pin given otherwise.
class RefusedPin : public Error {
 public:
  explicit RefusedPin(const std::string& why) : Error("compiler: " + why, kExitUsage), why_(why) {}
  const std::string& why() const { return why_; }

 private:
  std::string why_;
};

struct PlanPins {
  std::map<std::string, GemmSplits> gemm;
  std::map<std::string, AttentionBlocks> attention;
  // The tile a GEMM's or attention op's first cell goes to (cells then follow in order,
  // wrapping at the last tile); absent: tile 0. Consecutive ops on different tiles keep
  // more of a consumer's input on its own tile and spread the receivers.
  std::map<std::string, std::uint32_t> tile_offsets;
  // LayerNorm ops of the encoder layer normalised where their input lies (each tile the
  // moments of its column part of the rows, the parts' moments exchanged and combined,
  // then applied) instead of gathered into whole rows (lower_norm.cpp).
  std::set<std::string> split_norms;
  // GELU ops computed with FP8 output (gelu_f8) in place of the GELU and the FP8 cast
  // that follows it: the same bits, one measured kernel.
  std::set<std::string> fp8_output_gelus;
  // Encoder attention ops with FP8 products (docs/NUMERICS.md): Q, K and V cast to F143 in
  // the QKV epilogue, FP8 QK^T and P.V. Absent: FP16 attention, the heuristic plan's.
  std::set<std::string> fp8_attention;
};

// The grids lowering uses: the op's pin (Error naming the op, kExitUsage, when the pin
// does not fit the shape or the tiles), else the chosen grid. A GEMM then uses most of the
// chip so every weight byte has a home tile: min_tiles starts at 3/4 of `tiles` and halves
// until a grid exists. A cap applies to chosen grids only, never to a pin.
GemmGrid plan_gemm_grid(const target::MachineDescription& machine, const GemmShape& shape, std::uint32_t tiles,
                        const PlanPins& pins, const std::string& op_name, const GemmMemoryCap& cap = {});
AttentionGrid plan_attention_grid(const target::MachineDescription& machine, std::uint32_t queries, std::uint32_t keys,
                                  std::uint32_t head_dim, std::uint32_t heads, std::uint32_t tiles,
                                  const PlanPins& pins, const std::string& op_name);

}  // namespace tilevit::compiler
