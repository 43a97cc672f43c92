#pragma once
// Prefetching tile memory that is about to be overwritten: tile memory is cold (~1 GB
// touched per call), and a store that misses waits for its line to be read first.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

namespace tilevit::device {

// Every 64 B line of [p, p + bytes) prefetched into L1. A read prefetch (`_m_prefetchw`
// compiles to the same `prefetcht0` without the PRFCHW target): an unshared line arrives
// exclusive, so the later store does not wait.
inline void prefetch_lines(const void* p, std::size_t bytes) {
  const std::uintptr_t begin = reinterpret_cast<std::uintptr_t>(p);
  for (std::uintptr_t line = begin & ~std::uintptr_t(63); line < begin + bytes; line += 64)
    _mm_prefetch(reinterpret_cast<const char*>(line), _MM_HINT_T0);
}

}  // namespace tilevit::device
