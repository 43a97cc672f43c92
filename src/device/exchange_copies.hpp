#pragma once
// The copies of one exchange phase in the order the device model runs them. A phase of
// the full model moves up to ~70 MB in ~1.4 M pieces of ~50-150 B (rows of one tile's
// slice sent to the tiles that need them); in program order the destinations jump all
// over the ~1 GB of tile memory and every piece costs a cache miss on both sides. Sorted
// by destination, each tile's incoming bytes are written in address order while the
// sources (mostly the same few rows sent to many tiles) stay in cache. The device runs
// each tile's copies just before that tile's next kernels (run_tile, plain stores: the
// kernels then read them from cache); a phase run on its own in chunks (run_chunk) writes
// whole lines with streaming stores if big, so lines it overwrites are not read first.
// The verifier guarantees that no copy of a phase writes what another one reads or
// writes, so any order gives the same bytes.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tilevit::device {

// One copy, as byte offsets into the whole tile memory (which must be under 4 GiB); the
// source moves by source_stride bytes per iteration of the layer loop.
struct Copy {
  std::uint32_t destination = 0, source = 0, bytes = 0, source_stride = 0;
};

class ExchangeCopies {
 public:
  // Phases writing more than this use streaming stores: they overflow the caches anyway.
  static constexpr std::uint64_t kStreamingBytes = 16u << 20;

  ExchangeCopies() = default;
  // `copies` in any order, into a memory of `tiles` tiles `tile_stride` bytes apart; sorted by
  // destination, merged where both sides continue, indexed by destination tile and cut
  // into chunks of about 16 KiB for the threads.
  ExchangeCopies(std::vector<Copy> copies, std::uint64_t tile_stride, std::uint32_t tiles,
                 std::uint64_t streaming_bytes = kStreamingBytes);

  std::size_t chunks() const { return chunk_begin_.empty() ? 0 : chunk_begin_.size() - 1; }
  // Runs chunk c (chunks are disjoint: any order, any thread) of iteration `iteration`
  // on the tile memory at `base`. Offsets are not checked here: the caller checked them.
  void run_chunk(std::uint8_t* base, std::size_t c, std::uint32_t iteration) const;

  bool receives(std::uint32_t tile) const { return tile + 1 < tile_first_.size() && tile_first_[tile + 1] > tile_first_[tile]; }
  // Runs the copies into one tile with plain stores (their lines stay in cache for the
  // tile's next kernels).
  void run_tile(std::uint8_t* base, std::uint32_t tile, std::uint32_t iteration) const;

  const std::vector<Copy>& copies() const { return copies_; }
  bool streaming() const { return streaming_; }

 private:
  std::vector<Copy> copies_;                // by destination
  std::vector<std::uint32_t> chunk_begin_;  // chunk c = copies_[chunk_begin_[c], chunk_begin_[c + 1])
  bool streaming_ = false;
  std::vector<std::uint32_t> tile_first_;  // copies into tile t = copies_[tile_first_[t], tile_first_[t + 1])
};

// Runs `copies` in order (exposed for tests): with streaming stores if `streaming` and
// the CPU has AVX-512, otherwise plain copies; the bytes written are the same.
void run_copies(std::uint8_t* base, const Copy* copies, std::size_t n, std::uint32_t iteration, bool streaming);

}  // namespace tilevit::device
