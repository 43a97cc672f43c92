#pragma once
// Per-tile memory placement: gives every allocation request of a tile an SRAM address.
// The program is a static sequence of supersteps, so every lifetime is known before
// placement: this is the offline dynamic storage allocation problem. Algorithm, rules and
// the definitions of the statistics: docs/PLACEMENT.md.
//
// Guarantees of a successful placement (what a verifier re-checks):
// - every allocation lies inside SRAM, inside ONE region that satisfies its RegionNeed
//   (region_satisfies), and overlaps no reserved range active in this build (ranges with
//   `when = profiling` count only when `profiling` is true);
// - address % alignment == 0;
// - two allocations whose lifetimes overlap never overlap in address (parameters and
//   support live for the whole program, whatever their first/last say);
// - two allocations of an ElementConflict whose lifetimes overlap share no element unit
//   (unit = element_bytes * unit_elements of the region, counted from the region start);
// - deterministic: the same input gives the same addresses, whatever the thread count.
// A request set that cannot be placed throws DoesNotFit (exit 3) with one line naming
// the tile, the allocation, its size, the free bytes and the largest hole.
// A malformed request (bytes 0, alignment not a power of two, first > last, conflict index
// out of range) is a compiler bug: Error(kExitInternal).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "support/error.hpp"
#include "target/machine.hpp"

namespace tilevit::compiler {

enum class AllocationKind : std::uint8_t { parameter, activation, scratch, support };
inline constexpr std::size_t kAllocationKinds = 4;

// interleaved: 128-bit matrix-unit operands (a region with load_bytes_per_cycle >= 16);
// standard: code (a region with code = yes); any: any region.
enum class RegionNeed : std::uint8_t { any, interleaved, standard };

// What a tile's support allocations hold; every other allocation holds tensor data. Code
// tells allocations apart by purpose, never by label.
enum class AllocationPurpose : std::uint8_t { tensor_data, kernel_code, exchange_tables, profile_samples };
// The label a support purpose is allocated (and stored in a package) under: "support.code".
std::string_view support_label(AllocationPurpose purpose);
// The purpose of a support allocation read back by its label (tensor_data if none matches).
AllocationPurpose purpose_of_support_label(std::string_view label);

// Lifetimes count phases, two per superstep: its compute phase (kernels, then the tiles'
// local copies) and then its exchange phase. A buffer read last by step s's kernels and
// one first written by step s's exchange never live at once, so they may share bytes
// (what a GEMM's partial sums and the next GEMM's gathered operand do).
constexpr std::uint32_t compute_phase(std::uint32_t step) { return 2 * step; }
constexpr std::uint32_t exchange_phase(std::uint32_t step) { return 2 * step + 1; }
constexpr std::uint32_t step_of_phase(std::uint32_t phase) { return phase / 2; }
// "step 15 (exchange)": how reports name a phase.
std::string describe_phase(std::uint32_t phase);

struct AllocationRequest {
  std::string label;          // e.g. "layer.mlp_up.weight F143 [192x160]" (errors, memory map)
  AllocationKind kind = AllocationKind::activation;
  std::uint32_t bytes = 0;    // > 0
  std::uint32_t alignment = 1;  // power of two >= 1
  RegionNeed region = RegionNeed::any;
  // Inclusive lifetime in program phases (compute_phase, exchange_phase below). Ignored
  // for parameters and support, which live for the whole program.
  std::uint32_t first = 0, last = 0;
  AllocationPurpose purpose = AllocationPurpose::tensor_data;
};

// Request indices that must not share any SRAM element unit while both live (a GEMM's
// output and its streamed operand: one element serves one access per cycle).
struct ElementConflict {
  std::uint32_t a = 0, b = 0;
};

struct TilePlacementInput {
  std::uint32_t tile = 0;
  std::vector<AllocationRequest> requests;
  std::vector<ElementConflict> conflicts;
};

// All byte counts are payload bytes (AllocationRequest::bytes); alignment padding counts
// as free space (it shows up as small holes, i.e. as fragmentation).
struct TileMemoryStats {
  std::uint32_t capacity = 0;      // usable bytes: all regions minus the active reserved ranges
  std::uint32_t peak_live = 0;     // max over phases of the bytes of live allocations
  std::uint32_t peak_phase = 0;    // the earliest phase where peak_live is reached
  std::uint32_t free_at_peak = 0;  // capacity - peak_live
  // Bytes of SRAM covered by at least one allocation at some time (measure of the union
  // of all placed ranges). >= peak_live; == peak_live when memory is perfectly reused.
  std::uint32_t high_water = 0;
  // Largest free contiguous range at peak_phase (inside one free segment: a region part
  // between reserved ranges).
  std::uint32_t largest_hole_at_peak = 0;
  std::uint32_t bytes_by_kind[kAllocationKinds] = {};  // live bytes per kind at peak_phase
  // At peak_phase: 1 - (sum over free segments of the segment's largest hole) / free_at_peak.
  // 0 = every free segment holds its free bytes in one piece; 0 when nothing is free.
  double fragmentation = 0;
};

struct TilePlacement {
  std::vector<std::uint32_t> address;  // one per request, in request order
  TileMemoryStats stats;
  std::uint32_t attempts = 1;  // placement passes run; 1 = the primary order fitted
};

// A free part of one region: the region minus the reserved ranges active in this build.
struct FreeSegment {
  std::uint32_t start = 0, end = 0;  // [start, end)
  std::uint32_t region = 0;          // index into MachineDescription::regions
  bool operator==(const FreeSegment&) const = default;
};
// Sorted by address. On the C600: 0x4C000-0x50000 and 0x586E0-0x80000 (standard),
// 0x80000-0xE7BB0 (interleaved; from 0x80380 when profiling).
std::vector<FreeSegment> free_segments(const target::MachineDescription& machine, bool profiling);

std::string_view to_string(AllocationKind kind);
std::string_view to_string(RegionNeed need);
// True for kinds that live for the whole program (parameter, support).
bool is_whole_program(AllocationKind kind);
// Whether `region` may hold an allocation with this need (see RegionNeed).
bool region_satisfies(const target::MemoryRegion& region, RegionNeed need);

// How far a tile is from fitting, in a user's terms (no allocation named): the CLI's
// one-line "does not fit" error is built from it.
struct TileOverflow {
  std::uint32_t tile = 0;
  // false: the bytes live at `phase` exceed the tile's capacity (`needed` > `available`);
  // true: they fit, but no free range of `needed` bytes is left in one piece (`available`
  // is the largest) in the regions that may hold it.
  bool one_piece = false;
  std::uint64_t needed = 0, available = 0;
  std::uint32_t phase = 0;
  std::uint32_t tiles_over = 1;  // tiles that do not fit (place_all)
};
// One line: "tile 713 needs 812345 B at step 40 (exchange), 603344 B available (and 3 more
// tiles)".
std::string describe(const TileOverflow& overflow);

// What place_tile and place_all throw when requests do not fit (exit 3: the model is too
// big for the machine): what() is the
// compiler's diagnostic naming the allocation, overflow() the worst tile's figures.
class DoesNotFit : public Error {
 public:
  DoesNotFit(const std::string& message, const TileOverflow& overflow)
      : Error(message, kExitBadInput), overflow_(overflow) {}
  const TileOverflow& overflow() const { return overflow_; }

 private:
  TileOverflow overflow_;
};

// The most bytes live at once on a tile (whole-program allocations always live) and the
// earliest phase where that peak is reached; what any placement must find room for.
struct PeakLive {
  std::uint64_t bytes = 0;
  std::uint32_t phase = 0;
};
PeakLive peak_live(const TilePlacementInput& input);

// Places one tile's requests. Throws DoesNotFit when they do not fit.
TilePlacement place_tile(const target::MachineDescription& machine, const TilePlacementInput& input,
                         bool profiling);

// All tiles, in parallel over tiles (OpenMP); results do not depend on the thread count.
// On failure, throws the error of the first failing tile in input order (the message
// says how many other tiles failed), carrying the overflow of the worst tile (the most
// bytes over its capacity).
std::vector<TilePlacement> place_all(const target::MachineDescription& machine,
                                     const std::vector<TilePlacementInput>& tiles, bool profiling);

// The statistics of any valid placement `address` of `input` (definitions above).
TileMemoryStats memory_stats(const target::MachineDescription& machine, const TilePlacementInput& input,
                             const std::vector<std::uint32_t>& address, bool profiling);

// One line: "capacity 603344 B, peak live ... at step 12 (compute), high water ..., ...".
std::string describe(const TileMemoryStats& stats);
nlohmann::json to_json(const TileMemoryStats& stats);

}  // namespace tilevit::compiler
