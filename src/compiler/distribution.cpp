#include "compiler/distribution.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "support/error.hpp"

namespace tilevit::compiler {

void plan_transfers(const Distribution& source, const std::vector<Need>& needs, std::vector<Transfer>& out) {
  const std::uint32_t esize = dtype_bytes(source.dtype);
  // (source tile, allocation, offset, bytes) -> transfer index, for multicast merging.
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>, std::size_t> runs;
  auto emit = [&](const Block& b, std::uint32_t src_offset, std::uint32_t bytes, const Endpoint& dst) {
    const auto key = std::make_tuple(b.tile, b.allocation, src_offset, bytes);
    auto it = runs.find(key);
    if (it == runs.end()) {
      Transfer t;
      t.source = Endpoint{b.tile, b.allocation, src_offset};
      t.bytes = bytes;
      t.source_layer_stride = source.layer_stride;
      out.push_back(std::move(t));
      it = runs.emplace(key, out.size() - 1).first;
    }
    out[it->second].destinations.push_back(dst);
  };
  for (const Need& n : needs) {
    std::uint64_t covered = 0;
    for (const Block& b : source.blocks) {
      const std::uint32_t r0 = std::max(n.row0, b.row0), r1 = std::min(n.row0 + n.rows, b.row0 + b.rows);
      const std::uint32_t c0 = std::max(n.col0, b.col0), c1 = std::min(n.col0 + n.cols, b.col0 + b.cols);
      if (r0 >= r1 || c0 >= c1) continue;
      covered += std::uint64_t(r1 - r0) * (c1 - c0);
      const std::uint32_t width = c1 - c0;
      auto src_at = [&](std::uint32_t r) { return b.offset + ((r - b.row0) * b.cols + (c0 - b.col0)) * esize; };
      auto dst_at = [&](std::uint32_t r) { return n.offset + ((r - n.row0) * n.cols + (c0 - n.col0)) * esize; };
      if (width == b.cols && width == n.cols) {  // whole rows on both sides: one run
        emit(b, src_at(r0), (r1 - r0) * width * esize, Endpoint{n.tile, n.allocation, dst_at(r0)});
      } else {
        for (std::uint32_t r = r0; r < r1; ++r) emit(b, src_at(r), width * esize, Endpoint{n.tile, n.allocation, dst_at(r)});
      }
    }
    if (covered != std::uint64_t(n.rows) * n.cols)
      throw Error("compiler: tile " + std::to_string(n.tile) + " needs rows " + std::to_string(n.row0) + "+" +
                      std::to_string(n.rows) + " cols " + std::to_string(n.col0) + "+" + std::to_string(n.cols) +
                      " that the source distribution does not cover exactly",
                  kExitInternal);
  }
}

ExchangeLoad exchange_load(const std::vector<Transfer>& transfers, std::uint32_t tiles) {
  ExchangeLoad load{std::vector<std::uint64_t>(tiles), std::vector<std::uint64_t>(tiles), std::vector<std::uint32_t>(tiles),
                    std::vector<std::uint32_t>(tiles)};
  for (const Transfer& t : transfers) {
    load.sent_bytes[t.source.tile] += t.bytes;
    load.sent_runs[t.source.tile] += 1;
    for (const Endpoint& d : t.destinations) {
      load.received_bytes[d.tile] += t.bytes;
      load.received_runs[d.tile] += 1;
    }
  }
  return load;
}

}  // namespace tilevit::compiler
