#pragma once
// Bounds-checked views of one tile's SRAM, and conversions between its bytes and the
// host's float form of device values (exact both ways).
#include <array>
#include <cstdint>
#include <span>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/program.hpp"
#include "numerics/fp16.hpp"
#include "numerics/fp8.hpp"
#include "support/error.hpp"
#include "target/machine.hpp"

namespace tilevit::device {

// Every tile's SRAM in one anonymous mapping (zeroed by the kernel), advised to use
// transparent huge pages: calls touch ~1 GB of tile memory spread over 1,472 tiles, and
// with 4 KiB pages the TLB misses and first-touch faults cost as much as the copies.
class TileMemory {
 public:
  TileMemory(std::uint32_t tiles, std::uint32_t bytes_per_tile);
  ~TileMemory();
  TileMemory(const TileMemory&) = delete;
  TileMemory& operator=(const TileMemory&) = delete;
  std::span<std::uint8_t> tile(std::uint32_t t) {
    return {base_ + std::size_t(t) * stride_, bytes_per_tile_};
  }
  std::uint32_t tiles() const { return tiles_; }
  // Host bytes from one tile's first byte to the next one's: the SRAM size rounded up to an
  // odd number of 64 B lines. At a stride of the C600's 624 KiB (a multiple of 16 KiB) the
  // same address on every tile would fall into a few cache sets, so an operand gathered
  // from many tiles (a GEMM's A rows, multicast to 72 tiles) could not stay in cache
  // between its receivers; an odd line count spreads consecutive tiles over all sets
  // (docs/experiments/device-host-speed.md, round 10).
  std::uint32_t stride() const { return stride_; }
  static std::uint32_t stride_for(std::uint32_t bytes_per_tile) { return ((bytes_per_tile + 63) / 64 | 1) * 64; }

 private:
  std::uint8_t* base_ = nullptr;
  std::size_t mapped_ = 0;
  std::uint32_t tiles_ = 0, bytes_per_tile_ = 0, stride_ = 0;
};

// Where an access comes from, for error messages: "tile 12, superstep 7 (layer.qkv), gemm_fp8".
struct AccessContext {
  std::uint32_t tile = 0, step = 0;
  const char* step_label = "";
  const char* what = "";
};

inline std::string describe(const AccessContext& c) {
  return "tile " + std::to_string(c.tile) + ", superstep " + std::to_string(c.step) + " (" + c.step_label + "), " + c.what;
}

// The bytes [address, address + bytes) of `sram` (which starts at machine.sram_base), or
// an Error naming the access.
inline std::uint8_t* sram_at(std::span<std::uint8_t> sram, const target::MachineDescription& m, std::uint64_t address,
                             std::uint64_t bytes, const AccessContext& c) {
  if (address < m.sram_base || address + bytes > std::uint64_t(m.sram_base) + sram.size())
    throw Error(describe(c) + ": access to 0x" + [&] {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(address));
      return std::string(buf);
    }() + " (+" + std::to_string(bytes) + " B) is outside the tile's SRAM", kExitInternal);
  return sram.data() + (address - m.sram_base);
}

// SRAM bytes are little-endian binary16; the F16C conversions read and write them in place.
inline void load_f16(const std::uint8_t* p, float* out, std::size_t n) {
  numerics::from_fp16_bits(reinterpret_cast<const std::uint16_t*>(p), out, n);
}
inline void store_f16(std::uint8_t* p, const float* in, std::size_t n) {
  numerics::to_fp16_bits(in, reinterpret_cast<std::uint16_t*>(p), n);
}
inline void load_f32(const std::uint8_t* p, float* out, std::size_t n) { std::memcpy(out, p, n * 4); }
inline void store_f32(std::uint8_t* p, const float* in, std::size_t n) { std::memcpy(p, in, n * 4); }
inline void load_f8(const std::uint8_t* p, float* out, std::size_t n, int scale) {
  numerics::fp8_decode(p, out, n, numerics::Fp8Format::F143, scale);
}

}  // namespace tilevit::device
