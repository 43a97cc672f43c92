#pragma once
// Where a 2-D tensor lives: a set of rectangular blocks, each stored row-major and
// compact (row stride = block width) at an allocation on one tile. Exchange planning
// turns "tile t needs rows r0.. cols c0.. of this tensor in its buffer" into explicit
// transfers, one per contiguous run, multicast where several tiles need the same run.
#include <cstdint>
#include <vector>

#include "compiler/graph.hpp"
#include "compiler/program.hpp"

namespace tilevit::compiler {

struct Block {
  std::uint32_t row0 = 0, rows = 0, col0 = 0, cols = 0;
  std::uint32_t tile = 0, allocation = 0, offset = 0;
};

struct Distribution {
  std::uint32_t rows = 0, cols = 0;
  DType dtype = DType::f16;
  std::uint32_t layer_stride = 0;  // per-iteration step of every block's address (sequences)
  std::vector<Block> blocks;
};

// Tile `tile` wants rows [row0, row0+rows) x cols [col0, col0+cols) of a tensor in its
// buffer (allocation, offset), row-major with row stride `cols`.
struct Need {
  std::uint32_t tile = 0, allocation = 0, offset = 0;
  std::uint32_t row0 = 0, rows = 0, col0 = 0, cols = 0;
};

// Appends the transfers that satisfy `needs` from `source` to `out`; identical source
// runs wanted by several tiles become one multicast transfer. Throws if a need is not
// covered by the source's blocks (a compiler bug).
void plan_transfers(const Distribution& source, const std::vector<Need>& needs, std::vector<Transfer>& out);

// Words each tile sends and receives in one exchange phase (multicast sent once).
struct ExchangeLoad {
  std::vector<std::uint64_t> sent_bytes, received_bytes;
  std::vector<std::uint32_t> sent_runs, received_runs;
};
ExchangeLoad exchange_load(const std::vector<Transfer>& transfers, std::uint32_t tiles);

}  // namespace tilevit::compiler
