#include "device/exchange_copies.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "device/prefetch.hpp"
#include "numerics/cpu.hpp"

namespace tilevit::device {
namespace {

constexpr std::uint64_t kChunkBytes = 16 * 1024;
constexpr std::size_t kAhead = 24;  // copies whose ends are prefetched ahead (~3 KB: a few microseconds of copying)

#define TV_AVX512 __attribute__((target("avx512f,avx512vl,avx512bw,bmi2")))

// Every 64 B step is a masked move (all lanes but in the last): a plain load/store loop
// here is turned into a call to memcpy by GCC, which costs as much as a ~100 B copy.
TV_AVX512 inline void copy_bytes_512(std::uint8_t* dst, const std::uint8_t* src, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; i += 64) {
    const __mmask64 m = bytes - i >= 64 ? ~0ull : _bzhi_u64(~0ull, static_cast<unsigned>(bytes - i));
    _mm512_mask_storeu_epi8(dst + i, m, _mm512_maskz_loadu_epi8(m, src + i));
  }
}

// Every line a copy writes, prefetched, not only the first: copies of a few lines (the qkv
// and fc1 operands, the partial sums) then do not wait on each line in turn.
TV_AVX512 inline void prefetch_destination(std::uint8_t* base, const Copy& y) { prefetch_lines(base + y.destination, y.bytes); }

// Plain stores, inline (a call into memcpy per ~100 B piece costs as much as the copy),
// with the sources (first and last byte) and destinations (every line) of the copies
// kAhead on prefetched.
TV_AVX512 void run_regular_512(std::uint8_t* base, const Copy* copies, std::size_t n, std::uint32_t iteration) {
  auto source = [base, iteration](const Copy& x) { return base + x.source + std::size_t(x.source_stride) * iteration; };
  for (std::size_t i = 0; i < std::min(n, kAhead); ++i) {
    _mm_prefetch(reinterpret_cast<const char*>(source(copies[i])), _MM_HINT_T0);
    prefetch_destination(base, copies[i]);
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (i + kAhead < n) {
      const Copy& y = copies[i + kAhead];
      _mm_prefetch(reinterpret_cast<const char*>(source(y)), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(source(y)) + y.bytes - 1, _MM_HINT_T0);
      prefetch_destination(base, y);
    }
    copy_bytes_512(base + copies[i].destination, source(copies[i]), copies[i].bytes);
  }
}

// Copies whose destinations follow one another (a run) are assembled line by line in a
// register: each piece is loaded so that its bytes sit at their places in the 64 B
// destination line (a masked load from source - offset: masked-off bytes are neither read
// nor faulted on) and merged under a mask. A line the run covers whole is written with a
// streaming store (it is not read first), the run's partial first and last lines with
// masked plain stores of just the run's bytes.
TV_AVX512 void run_streaming_512(std::uint8_t* base, const Copy* copies, std::size_t n, std::uint32_t iteration) {
  std::size_t i = 0;
  while (i < n) {
    std::uint8_t* d = base + copies[i].destination;
    std::uint64_t have = 0;  // bytes of the current line already assembled
    __m512i line = _mm512_setzero_si512();
    std::uint8_t* run_end = d;
    do {
      const std::uint8_t* s = base + copies[i].source + std::size_t(copies[i].source_stride) * iteration;
      std::size_t bytes = copies[i].bytes;
      run_end += bytes;
      while (bytes > 0) {
        const std::size_t off = reinterpret_cast<std::uintptr_t>(d) & 63;
        const std::size_t take = std::min<std::size_t>(bytes, 64 - off);
        const std::uint64_t m = _bzhi_u64(~0ull, static_cast<unsigned>(take)) << off;
        line = _mm512_mask_mov_epi8(line, m, _mm512_maskz_loadu_epi8(m, s - off));
        have |= m;
        d += take, s += take, bytes -= take;
        if ((reinterpret_cast<std::uintptr_t>(d) & 63) == 0) {
          std::uint8_t* l = d - 64;
          if (have == ~0ull)
            _mm512_stream_si512(reinterpret_cast<__m512i*>(l), line);
          else
            _mm512_mask_storeu_epi8(l, have, line);
          have = 0;
        }
      }
      ++i;
    } while (i < n && base + copies[i].destination == run_end);
    if (have) _mm512_mask_storeu_epi8(d - (reinterpret_cast<std::uintptr_t>(d) & 63), have, line);
  }
  _mm_sfence();  // streaming stores are weakly ordered: make them visible before the phase ends
}

bool has_avx512_bmi2() {
  static const bool yes = numerics::has_avx512() && __builtin_cpu_supports("bmi2");
  return yes;
}

}  // namespace

void run_copies(std::uint8_t* base, const Copy* copies, std::size_t n, std::uint32_t iteration, bool streaming) {
  if (has_avx512_bmi2()) return streaming ? run_streaming_512(base, copies, n, iteration) : run_regular_512(base, copies, n, iteration);
  for (std::size_t i = 0; i < n; ++i)
    std::memcpy(base + copies[i].destination, base + copies[i].source + std::size_t(copies[i].source_stride) * iteration,
                copies[i].bytes);
}

ExchangeCopies::ExchangeCopies(std::vector<Copy> copies, std::uint64_t tile_stride, std::uint32_t tiles,
                               std::uint64_t streaming_bytes)
    : copies_(std::move(copies)) {
  std::sort(copies_.begin(), copies_.end(), [](const Copy& a, const Copy& b) { return a.destination < b.destination; });
  std::size_t n = 0;
  for (const Copy& c : copies_) {
    if (c.bytes == 0) continue;
    Copy* last = n > 0 ? &copies_[n - 1] : nullptr;
    if (last && last->destination + last->bytes == c.destination && last->source + last->bytes == c.source &&
        last->source_stride == c.source_stride)
      last->bytes += c.bytes;
    else
      copies_[n++] = c;
  }
  copies_.resize(n);
  copies_.shrink_to_fit();
  std::uint64_t in_chunk = 0, bytes = 0;
  for (std::uint32_t i = 0; i < copies_.size(); ++i) {
    if (in_chunk == 0) chunk_begin_.push_back(i);
    in_chunk += copies_[i].bytes, bytes += copies_[i].bytes;
    if (in_chunk >= kChunkBytes) in_chunk = 0;
  }
  if (!chunk_begin_.empty()) chunk_begin_.push_back(static_cast<std::uint32_t>(copies_.size()));
  streaming_ = bytes > streaming_bytes;
  tile_first_.assign(std::size_t(tiles) + 1, static_cast<std::uint32_t>(copies_.size()));
  std::size_t i = 0;
  for (std::uint32_t t = 0; t < tiles; ++t) {
    while (i < copies_.size() && copies_[i].destination / tile_stride < t) ++i;
    tile_first_[t] = static_cast<std::uint32_t>(i);
  }
}

void ExchangeCopies::run_tile(std::uint8_t* base, std::uint32_t tile, std::uint32_t iteration) const {
  if (!receives(tile)) return;
  run_copies(base, copies_.data() + tile_first_[tile], tile_first_[tile + 1] - tile_first_[tile], iteration, false);
}

void ExchangeCopies::run_chunk(std::uint8_t* base, std::size_t c, std::uint32_t iteration) const {
  run_copies(base, copies_.data() + chunk_begin_[c], chunk_begin_[c + 1] - chunk_begin_[c], iteration, streaming_);
}

}  // namespace tilevit::device
