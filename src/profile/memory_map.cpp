// The memory map: per tile, every allocation's address range and lifetime, the reserved
// ranges as entries of their own, and the placement statistics (docs/MEMORY_MAP.md).
#include "profile/memory_map.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "compiler/compile.hpp"
#include "support/error.hpp"

namespace tilevit::profile {
namespace {

MemoryKind memory_kind(compiler::AllocationKind kind) {
  switch (kind) {
    case compiler::AllocationKind::parameter: return MemoryKind::parameter;
    case compiler::AllocationKind::activation: return MemoryKind::activation;
    case compiler::AllocationKind::scratch: return MemoryKind::scratch;
    case compiler::AllocationKind::support: return MemoryKind::support;
  }
  return MemoryKind::support;
}

// An entry while its tile is laid out: what the alignment tail needs besides the entry.
struct PendingEntry {
  MemoryEntry entry;
  std::uint32_t alignment = 1;  // reserved ranges need none
  bool whole = false;           // lives for the whole program (parameters, support, reserved ranges)
};

bool lifetimes_overlap(const PendingEntry& a, const PendingEntry& b) {
  return a.whole || b.whole || (a.entry.first <= b.entry.last && b.entry.first <= a.entry.last);
}

// Labels are interned in order of first appearance (tile order, then program order), so
// the table is deterministic and the per-allocation field is a small integer. A label is
// any bytes a package holds: invalid UTF-8 becomes U+FFFD, so memory.json and memory.html
// can always be written (issue #22, item 7).
class LabelTable {
 public:
  std::uint32_t intern(const std::string& text) {
    const auto [it, inserted] = index_.try_emplace(text, static_cast<std::uint32_t>(labels_.size()));
    if (inserted)
      labels_.push_back(nlohmann::json::parse(nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
                            .get<std::string>());
    return it->second;
  }
  std::vector<std::string> take() { return std::move(labels_); }

 private:
  std::unordered_map<std::string, std::uint32_t> index_;
  std::vector<std::string> labels_;
};

std::uint32_t round_up(std::uint64_t v, std::uint32_t alignment) {
  const std::uint64_t a = std::max<std::uint32_t>(alignment, 1);
  return static_cast<std::uint32_t>((v + a - 1) / a * a);
}

// Allocations addressed with a per-layer stride hold one block per loop iteration.
std::vector<std::uint32_t> shard_counts(const compiler::CompiledProgram& program) {
  std::vector<std::uint32_t> shards(program.allocations.size(), 1);
  auto mark = [&](std::uint32_t allocation) {
    if (allocation < shards.size()) shards[allocation] = std::max<std::uint32_t>(program.loop_count, 1);
  };
  for (const auto& step : program.steps) {
    for (const auto& call : step.compute)
      for (const auto& o : call.operands)
        if (o.layer_stride > 0) mark(o.allocation);
    for (const auto& x : step.exchange)
      if (x.source_layer_stride > 0) mark(x.source.allocation);
  }
  return shards;
}

// The last phase of the map: whole-program entries live until it. Also rejects
// allocations on tiles the machine does not have.
std::uint32_t last_phase_of(const target::MachineDescription& machine, const compiler::CompiledProgram& program) {
  std::uint32_t last_phase =
      program.steps.empty() ? 0 : compiler::exchange_phase(static_cast<std::uint32_t>(program.steps.size() - 1));
  for (const auto& a : program.allocations) {
    if (a.tile >= machine.tiles)
      throw Error("memory map: allocation '" + a.request.label + "' on tile " + std::to_string(a.tile) +
                  " outside the machine (" + std::to_string(machine.tiles) + " tiles)");
    if (!compiler::is_whole_program(a.request.kind)) last_phase = std::max(last_phase, a.request.last);
  }
  return last_phase;
}

PendingEntry whole_program_entry(MemoryKind kind, std::uint32_t label, std::uint32_t start, std::uint32_t end,
                                 std::uint32_t last_phase) {
  PendingEntry e;
  e.entry.kind = kind;
  e.entry.label = label;
  e.entry.start = start;
  e.entry.end = e.entry.payload_end = end;
  e.entry.last = last_phase;
  e.whole = true;
  return e;
}

// Entries shared by every tile: the active reserved ranges and SRAM outside every region.
std::vector<PendingEntry> shared_entries(const target::MachineDescription& machine, bool profiling,
                                         std::uint32_t last_phase, LabelTable& labels) {
  std::vector<PendingEntry> shared;
  for (const auto& r : machine.reserved) {
    if (r.when != target::ReservedWhen::always && !profiling) continue;
    const MemoryKind kind = r.kind == target::ReservedKind::unreachable ? MemoryKind::padding : MemoryKind::support;
    const std::uint32_t label = labels.intern(r.name + " (reserved " + std::string(target::to_string(r.kind)) +
                                              "), " + std::string(to_string(kind)));
    shared.push_back(whole_program_entry(kind, label, r.start, r.end(), last_phase));
  }
  std::uint32_t cur = machine.sram_base;
  auto gap = [&](std::uint32_t from, std::uint32_t to) {
    if (from >= to) return;
    const std::uint32_t label = labels.intern("outside every region, padding");
    shared.push_back(whole_program_entry(MemoryKind::padding, label, from, to, last_phase));
  };
  for (const auto& g : machine.regions) {
    gap(cur, g.start);
    cur = std::max(cur, g.end);
  }
  gap(cur, machine.sram_end());
  return shared;
}

std::string allocation_label(const compiler::Allocation& a) {
  return a.request.label + ", " + std::string(compiler::to_string(a.request.kind));
}

PendingEntry program_entry(const compiler::Allocation& a, std::uint32_t shards, std::uint32_t last_phase,
                           LabelTable& labels) {
  PendingEntry e;
  e.entry.kind = memory_kind(a.request.kind);
  e.entry.label = labels.intern(allocation_label(a));
  e.entry.start = a.address;
  e.entry.payload_end = e.entry.end = a.address + a.request.bytes;
  e.whole = compiler::is_whole_program(a.request.kind);
  e.entry.first = e.whole ? 0 : a.request.first;
  e.entry.last = e.whole ? last_phase : a.request.last;
  e.entry.shards = shards;
  e.alignment = a.request.alignment;
  return e;
}

// Sorts a tile's entries by address (ties: lifetime, then the order they came in, which
// makes the file easy to read and diff) and gives each its alignment tail: up to the next
// multiple of its alignment, unless something that lives at the same time starts inside
// it (then the bytes are not lost). Returns the tail bytes.
std::uint64_t lay_out(const target::MachineDescription& machine, std::vector<PendingEntry>& entries) {
  std::stable_sort(entries.begin(), entries.end(), [](const PendingEntry& a, const PendingEntry& b) {
    if (a.entry.start != b.entry.start) return a.entry.start < b.entry.start;
    return a.entry.first < b.entry.first;
  });
  std::uint64_t padding_bytes = 0;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    MemoryEntry& e = entries[i].entry;
    std::uint32_t end = std::min(round_up(e.payload_end, entries[i].alignment), machine.sram_end());
    if (const auto* region = machine.region_at(e.start)) end = std::min(end, region->end);
    for (std::size_t j = i + 1; j < entries.size() && entries[j].entry.start < end; ++j)
      if (entries[j].entry.start >= e.payload_end && lifetimes_overlap(entries[i], entries[j]))
        end = std::min(end, entries[j].entry.start);
    // Entries starting at the same address as e (j < i after sorting) never matter:
    // they overlap e's payload, which placement forbids for overlapping lifetimes.
    e.end = std::max(end, e.payload_end);
    padding_bytes += e.end - e.payload_end;
  }
  return padding_bytes;
}

MemoryTileSummary tile_summary(const compiler::TileMemoryStats& stats, std::uint32_t allocations,
                               std::uint64_t padding_bytes) {
  MemoryTileSummary s;
  s.capacity = stats.capacity;
  s.allocations = allocations;
  s.peak_bytes = stats.peak_live;
  s.peak_phase = stats.peak_phase;
  s.free_at_peak = stats.free_at_peak;
  s.largest_hole = stats.largest_hole_at_peak;
  s.high_water = stats.high_water;
  s.fragmentation = stats.fragmentation;
  s.padding_bytes = padding_bytes;
  std::copy(std::begin(stats.bytes_by_kind), std::end(stats.bytes_by_kind), s.bytes_by_kind.begin());
  return s;
}

// The machine-wide part of the map: everything but the labels and the tiles.
MemoryMap map_frame(const target::MachineDescription& machine, const compiler::CompiledProgram& program,
                    bool profiling) {
  MemoryMap map;
  map.machine = {machine.name, machine.tiles, machine.rows, machine.columns};
  map.profiling = profiling;
  map.start = machine.sram_base;
  map.end = machine.sram_end();
  map.steps = static_cast<std::uint32_t>(program.steps.size());
  map.loop = {program.loop_begin, program.loop_end, program.loop_count};
  for (const auto& g : machine.regions) map.regions.push_back({g.name, g.start, g.end});
  for (const auto& r : machine.reserved)
    map.reserved.push_back({r, r.when == target::ReservedWhen::always || profiling});
  map.program_allocations = static_cast<std::uint32_t>(program.allocations.size());
  return map;
}

}  // namespace

std::string_view to_string(MemoryKind kind) {
  constexpr std::string_view kNames[kMemoryKindCount] = {"parameter", "activation", "scratch", "padding", "support"};
  const auto index = static_cast<std::size_t>(kind);
  return index < kMemoryKindCount ? kNames[index] : "padding";
}

std::uint64_t MemoryMap::entry_count() const {
  std::uint64_t count = 0;
  for (const MemoryTile& tile : tiles) count += tile.entries.size();
  return count;
}

std::string map_subject(const MemoryMap& map) {
  if (!map.stage) return map.machine.name;
  return map.machine.name + ", stage " + std::to_string(map.stage->index) + " of " + std::to_string(map.stage->count);
}

MemoryMap build_memory_map(const target::MachineDescription& machine, const compiler::CompiledProgram& program,
                           bool profiling) {
  const std::uint32_t last_phase = last_phase_of(machine, program);
  MemoryMap map = map_frame(machine, program, profiling);
  LabelTable labels;
  const std::vector<PendingEntry> shared = shared_entries(machine, profiling, last_phase, labels);

  const std::vector<compiler::TileMemoryStats> stats = compiler::tile_memory_stats(machine, program, profiling);
  const std::vector<std::uint32_t> shards = shard_counts(program);
  std::vector<std::vector<std::uint32_t>> by_tile(machine.tiles);  // allocation indices, program order
  for (std::uint32_t i = 0; i < program.allocations.size(); ++i) by_tile[program.allocations[i].tile].push_back(i);

  const std::uint32_t columns = std::max<std::uint32_t>(machine.columns, 1);
  for (std::uint32_t t = 0; t < machine.tiles; ++t) {
    std::vector<PendingEntry> pending = shared;
    for (const std::uint32_t i : by_tile[t])
      pending.push_back(program_entry(program.allocations[i], shards[i], last_phase, labels));
    const std::uint64_t padding_bytes = lay_out(machine, pending);
    MemoryTile& tile = map.tiles.emplace_back();
    tile.logical = t;
    tile.row = t / columns;
    tile.column = t % columns;
    for (const PendingEntry& e : pending) tile.entries.push_back(e.entry);
    tile.summary = tile_summary(stats[t], static_cast<std::uint32_t>(by_tile[t].size()), padding_bytes);
  }
  map.over_time = memory_over_time(program, machine.tiles, [&](std::uint32_t i) {  // labels interned above
    return labels.intern(allocation_label(program.allocations[i]));
  });
  map.labels = labels.take();
  return map;
}

}  // namespace tilevit::profile
