#pragma once
// The exact memory map of every tile of a compiled program: where each allocation sits in
// SRAM, for which supersteps, and the reserved ranges every tile shares. A typed value:
// memory.png is drawn from it, and JSON (memory.json, the data inside memory.html) is made
// only at the file edge, by memory_map_json.hpp. Fields and meaning: docs/MEMORY_MAP.md.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/program.hpp"
#include "profile/memory_over_time.hpp"
#include "target/machine.hpp"

namespace tilevit::profile {

// Entry kinds of the map, in legend order: the four allocation kinds plus padding
// (alignment tails are part of an allocation: end > payload_end; the unreachable tail
// and SRAM outside every region are padding entries).
enum class MemoryKind : std::uint8_t { parameter, activation, scratch, padding, support };
inline constexpr std::size_t kMemoryKindCount = 5;
std::string_view to_string(MemoryKind kind);

// One allocation or reserved range on one tile.
struct MemoryEntry {
  std::uint32_t start = 0;
  std::uint32_t end = 0;          // exclusive, including the alignment tail
  std::uint32_t payload_end = 0;  // start + bytes of the allocation
  std::uint32_t label = 0;        // index into MemoryMap::labels
  MemoryKind kind = MemoryKind::activation;
  std::uint32_t first = 0, last = 0;  // inclusive lifetime in phases (compiler::compute_phase)
  std::uint32_t shards = 1;           // tensor blocks held: the loop count for a per-layer sequence
  bool operator==(const MemoryEntry&) const = default;
};

// Placement statistics of the program allocations on one tile (compiler::TileMemoryStats
// plus what the map adds).
struct MemoryTileSummary {
  std::uint32_t capacity = 0;
  std::uint32_t allocations = 0;  // program allocations on the tile
  std::uint32_t peak_bytes = 0, peak_phase = 0, free_at_peak = 0;
  std::uint32_t largest_hole = 0;  // at peak_phase
  std::uint32_t high_water = 0;
  double fragmentation = 0;
  std::uint64_t padding_bytes = 0;  // alignment tails of the tile's entries
  std::array<std::uint32_t, compiler::kAllocationKinds> bytes_by_kind{};  // live at peak_phase, by AllocationKind
  bool operator==(const MemoryTileSummary&) const = default;
};

struct MemoryTile {
  std::uint32_t logical = 0;
  std::uint32_t row = 0, column = 0;  // physical place: row-major over the machine's columns
  std::vector<MemoryEntry> entries;   // by start, then first
  MemoryTileSummary summary;
  bool operator==(const MemoryTile&) const = default;
};

struct MemoryMapMachine {
  std::string name;
  std::uint32_t tiles = 0, rows = 0, columns = 0;
  bool operator==(const MemoryMapMachine&) const = default;
};

struct MemoryMapRegion {
  std::string name;
  std::uint32_t start = 0, end = 0;
  bool operator==(const MemoryMapRegion&) const = default;
};

struct MemoryMapReserved {
  target::ReservedRange range;
  bool active = false;  // counted in this build (always, or profiling in a profiling build)
  bool operator==(const MemoryMapReserved&) const = default;
};

struct MemoryMapLoop {
  std::uint32_t begin = 0, end = 0, count = 1;  // steps [begin, end) run count times
  bool operator==(const MemoryMapLoop&) const = default;
};

// The stage of a pipeline package (several chips) the map shows: its chip's map.
struct MemoryMapStage {
  std::uint32_t index = 0, count = 0;
  bool operator==(const MemoryMapStage&) const = default;
};

struct MemoryMap {
  MemoryMapMachine machine;
  std::optional<MemoryMapStage> stage;  // absent for a one-chip package; set by the caller
  bool profiling = false;
  std::uint32_t start = 0, end = 0;  // SRAM [start, end)
  std::uint32_t steps = 0;
  MemoryMapLoop loop;
  std::vector<MemoryMapRegion> regions;
  std::vector<MemoryMapReserved> reserved;  // every reserved range of the machine, active or not
  std::uint32_t program_allocations = 0;
  // Interned "<allocation label>, <kind>" strings, in order of first appearance.
  std::vector<std::string> labels;
  std::vector<MemoryTile> tiles;  // logical order
  MemoryOverTime over_time;       // per step: the fullest tile's and the chip's live bytes by purpose

  std::uint64_t entry_count() const;
  bool operator==(const MemoryMap&) const = default;
};

// What the titles (memory.png, memory.html) name: "c600", or "c600, stage 1 of 2", so
// two stages' maps are not confused.
std::string map_subject(const MemoryMap& map);

// `profiling`: whether the build reserves the ranges with `when = profiling` (they then
// appear as support entries on every tile and count against each tile's capacity).
// Deterministic. Throws Error(kExitBadInput) when an allocation names a tile outside the
// machine.
MemoryMap build_memory_map(const target::MachineDescription& machine, const compiler::CompiledProgram& program,
                           bool profiling);

}  // namespace tilevit::profile
