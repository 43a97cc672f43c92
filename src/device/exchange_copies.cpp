#include "device/exchange_copies.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

namespace tilevit::device {
namespace {

constexpr std::uint64_t kChunkBytes = 16 * 1024;
constexpr std::size_t kAhead = 12;  // copies whose sources are prefetched ahead (~1 KB, ~1 miss latency)

#define TV_AVX512 __attribute__((target("avx512f,avx512vl,avx512bw,bmi2")))

TV_AVX512 inline void copy_bytes_512(std::uint8_t* dst, const std::uint8_t* src, std::size_t bytes) {
  for (; bytes >= 64; bytes -= 64, src += 64, dst += 64) _mm512_storeu_si512(dst, _mm512_loadu_si512(src));
  if (bytes > 0) {
    const __mmask64 m = _bzhi_u64(~0ull, static_cast<unsigned>(bytes));
    _mm512_mask_storeu_epi8(dst, m, _mm512_maskz_loadu_epi8(m, src));
  }
}

// Lines [from, to) (64 B multiples) of the 64 B aligned stage to the aligned line_dst.
TV_AVX512 inline void stream_lines_512(std::uint8_t* line_dst, const std::uint8_t* stage, std::size_t from, std::size_t to) {
  for (std::size_t l = from; l < to; l += 64)
    _mm512_stream_si512(reinterpret_cast<__m512i*>(line_dst + l), _mm512_load_si512(stage + l));
}

// Plain stores, inline (a call into memcpy per ~100 B piece costs as much as the copy),
// with the sources and destinations of the copies kAhead on prefetched.
TV_AVX512 void run_regular_512(std::uint8_t* base, const Copy* copies, std::size_t n, std::uint32_t iteration) {
  auto source = [base, iteration](const Copy& x) { return base + x.source + std::size_t(x.source_stride) * iteration; };
  for (std::size_t i = 0; i < std::min(n, kAhead); ++i) _mm_prefetch(reinterpret_cast<const char*>(source(copies[i])), _MM_HINT_T0);
  for (std::size_t i = 0; i < n; ++i) {
    if (i + kAhead < n) {
      const Copy& y = copies[i + kAhead];
      _mm_prefetch(reinterpret_cast<const char*>(source(y)), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(source(y)) + y.bytes - 1, _MM_HINT_T0);
      _m_prefetchw(base + y.destination);
    }
    copy_bytes_512(base + copies[i].destination, source(copies[i]), copies[i].bytes);
  }
}

// Copies whose destinations follow one another (a run) are staged in a buffer at the
// destinations' alignment and written out as whole 64 B lines with streaming stores;
// only the partial lines at a run's two ends are written with plain stores.
TV_AVX512 void run_streaming_512(std::uint8_t* base, const Copy* copies, std::size_t n, std::uint32_t iteration) {
  constexpr std::size_t kStage = 4096;
  alignas(64) std::uint8_t stage[kStage];
  auto source = [base, iteration](const Copy& x) { return base + x.source + std::size_t(x.source_stride) * iteration; };
  for (std::size_t i = 0; i < std::min(n, kAhead); ++i) _mm_prefetch(reinterpret_cast<const char*>(source(copies[i])), _MM_HINT_T0);
  std::size_t i = 0;
  while (i < n) {
    std::uint8_t* const run_dst = base + copies[i].destination;
    std::size_t lead = reinterpret_cast<std::uintptr_t>(run_dst) & 63;  // stage[lead] goes to run_dst
    std::uint8_t* line_dst = run_dst - lead;                            // where stage[0] goes
    std::size_t filled = lead;
    bool head_partial = lead != 0;  // the run's first line is not all the run's
    std::uint8_t* run_end = run_dst;
    do {
      if (i + kAhead < n) _mm_prefetch(reinterpret_cast<const char*>(source(copies[i + kAhead])), _MM_HINT_T0);
      const std::uint8_t* src = source(copies[i]);
      std::size_t bytes = copies[i].bytes;
      run_end += bytes;
      while (bytes > 0) {
        const std::size_t take = std::min(bytes, kStage - filled);
        copy_bytes_512(stage + filled, src, take);
        filled += take, src += take, bytes -= take;
        if (filled == kStage) {
          std::size_t from = 0;
          if (head_partial) copy_bytes_512(line_dst + lead, stage + lead, 64 - lead), head_partial = false, from = 64;
          stream_lines_512(line_dst, stage, from, kStage);
          line_dst += kStage, filled = 0, lead = 0;
        }
      }
      ++i;
    } while (i < n && base + copies[i].destination == run_end);
    std::size_t from = 0;
    if (head_partial) copy_bytes_512(line_dst + lead, stage + lead, std::min<std::size_t>(filled, 64) - lead), from = 64;
    const std::size_t whole = filled & ~std::size_t(63);
    if (from < whole) stream_lines_512(line_dst, stage, from, whole);
    if (std::max(from, whole) < filled) copy_bytes_512(line_dst + whole, stage + whole, filled - whole);
  }
  _mm_sfence();  // streaming stores are weakly ordered: make them visible before the phase ends
}

bool has_avx512() {
  static const bool yes = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("bmi2");
  return yes;
}

}  // namespace

void run_copies(std::uint8_t* base, const Copy* copies, std::size_t n, std::uint32_t iteration, bool streaming) {
  if (has_avx512()) return streaming ? run_streaming_512(base, copies, n, iteration) : run_regular_512(base, copies, n, iteration);
  for (std::size_t i = 0; i < n; ++i)
    std::memcpy(base + copies[i].destination, base + copies[i].source + std::size_t(copies[i].source_stride) * iteration,
                copies[i].bytes);
}

ExchangeCopies::ExchangeCopies(std::vector<Copy> copies, std::uint64_t streaming_bytes) : copies_(std::move(copies)) {
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
}

void ExchangeCopies::run_chunk(std::uint8_t* base, std::size_t c, std::uint32_t iteration) const {
  run_copies(base, copies_.data() + chunk_begin_[c], chunk_begin_[c + 1] - chunk_begin_[c], iteration, streaming_);
}

}  // namespace tilevit::device
