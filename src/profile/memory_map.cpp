// memory.json: per tile, every allocation's address range and lifetime, the reserved
// ranges as entries of their own, and the placement statistics (docs/MEMORY_MAP.md).
#include "profile/memory_map.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/compile.hpp"
#include "support/error.hpp"

namespace tilevit::profile {
namespace {

enum MapKind : std::uint8_t { kParameter, kActivation, kScratch, kPadding, kSupport };

MapKind map_kind(compiler::AllocationKind kind) {
  switch (kind) {
    case compiler::AllocationKind::parameter: return kParameter;
    case compiler::AllocationKind::activation: return kActivation;
    case compiler::AllocationKind::scratch: return kScratch;
    case compiler::AllocationKind::support: return kSupport;
  }
  return kSupport;
}

// One row of a tile's map before it becomes JSON.
struct Entry {
  std::uint32_t start = 0, end = 0, payload_end = 0;
  std::uint32_t label = 0;
  MapKind kind = kActivation;
  std::uint32_t first = 0, last = 0;
  std::uint32_t shards = 1;
  bool whole = false;  // lives for the whole program (parameters, support, reserved ranges)
};

bool lifetimes_overlap(const Entry& a, const Entry& b) {
  return a.whole || b.whole || (a.first <= b.last && b.first <= a.last);
}

// Labels are interned in order of first appearance (tile order, then program order), so
// the table is deterministic and the per-allocation field is a small integer.
class LabelTable {
 public:
  std::uint32_t intern(const std::string& text) {
    const auto [it, inserted] = index_.try_emplace(text, static_cast<std::uint32_t>(labels_.size()));
    if (inserted) labels_.push_back(text);
    return it->second;
  }
  const std::vector<std::string>& labels() const { return labels_; }

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

std::string hex(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%X", v);
  return buf;
}

}  // namespace

nlohmann::json memory_map_json(const target::MachineDescription& machine, const compiler::CompiledProgram& program,
                               bool profiling) {
  using nlohmann::json;
  const std::uint32_t tiles = machine.tiles;
  std::uint32_t last_step = program.steps.empty() ? 0 : static_cast<std::uint32_t>(program.steps.size() - 1);
  for (const auto& a : program.allocations) {
    if (a.tile >= tiles)
      throw Error("memory map: allocation '" + a.request.label + "' on tile " + std::to_string(a.tile) +
                  " outside the machine (" + std::to_string(tiles) + " tiles)");
    if (!compiler::is_whole_program(a.request.kind)) last_step = std::max(last_step, a.request.last);
  }

  LabelTable labels;
  // Entries shared by every tile: active reserved ranges and SRAM outside every region.
  std::vector<Entry> common;
  json reserved = json::array();
  for (const auto& r : machine.reserved) {
    const bool active = r.when == target::ReservedWhen::always || profiling;
    reserved.push_back({{"name", r.name},
                        {"kind", std::string(target::to_string(r.kind))},
                        {"start", r.start},
                        {"end", r.end()},
                        {"when", std::string(target::to_string(r.when))},
                        {"active", active}});
    if (!active) continue;
    Entry e;
    e.kind = r.kind == target::ReservedKind::unreachable ? kPadding : kSupport;
    e.label = labels.intern(r.name + " (reserved " + std::string(target::to_string(r.kind)) + "), " +
                            kMemoryKinds[e.kind]);
    e.start = r.start;
    e.end = e.payload_end = r.end();
    e.first = 0;
    e.last = last_step;
    e.whole = true;
    common.push_back(e);
  }
  {
    std::uint32_t cur = machine.sram_base;
    auto gap = [&](std::uint32_t from, std::uint32_t to) {
      if (from >= to) return;
      Entry e;
      e.kind = kPadding;
      e.label = labels.intern("outside every region, padding");
      e.start = from;
      e.end = e.payload_end = to;
      e.last = last_step;
      e.whole = true;
      common.push_back(e);
    };
    for (const auto& g : machine.regions) {
      gap(cur, g.start);
      cur = std::max(cur, g.end);
    }
    gap(cur, machine.sram_end());
  }

  // Program allocations per tile, in program order.
  const std::vector<compiler::TileMemoryStats> stats = compiler::tile_memory_stats(machine, program, profiling);
  const std::vector<std::uint32_t> shards = shard_counts(program);
  std::vector<std::vector<std::uint32_t>> by_tile(tiles);
  for (std::uint32_t i = 0; i < program.allocations.size(); ++i) by_tile[program.allocations[i].tile].push_back(i);

  std::uint64_t total_entries = 0;
  json tile_array = json::array();
  for (std::uint32_t t = 0; t < tiles; ++t) {
    std::vector<Entry> entries = common;
    std::vector<std::uint32_t> alignment;  // per entry; reserved ranges need none
    alignment.assign(entries.size(), 1);
    for (const std::uint32_t i : by_tile[t]) {
      const auto& a = program.allocations[i];
      Entry e;
      e.kind = map_kind(a.request.kind);
      e.label = labels.intern(a.request.label + ", " + std::string(compiler::to_string(a.request.kind)));
      e.start = a.address;
      e.payload_end = e.end = a.address + a.request.bytes;
      e.whole = compiler::is_whole_program(a.request.kind);
      e.first = e.whole ? 0 : a.request.first;
      e.last = e.whole ? last_step : a.request.last;
      e.shards = shards[i];
      entries.push_back(e);
      alignment.push_back(a.request.alignment);
    }
    // Address order (ties: lifetime, then kind and label) makes the file easy to read and diff.
    std::vector<std::uint32_t> order(entries.size());
    for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
      const Entry &a = entries[x], &b = entries[y];
      if (a.start != b.start) return a.start < b.start;
      if (a.first != b.first) return a.first < b.first;
      return x < y;
    });
    std::vector<Entry> sorted;
    std::vector<std::uint32_t> sorted_alignment;
    for (const std::uint32_t i : order) {
      sorted.push_back(entries[i]);
      sorted_alignment.push_back(alignment[i]);
    }
    // Alignment tail: up to the next multiple of the allocation's alignment, unless
    // something that lives at the same time starts inside it (then the bytes are not lost).
    std::uint64_t padding_bytes = 0;
    for (std::size_t i = 0; i < sorted.size(); ++i) {
      Entry& e = sorted[i];
      std::uint32_t end = std::min(round_up(e.payload_end, sorted_alignment[i]), machine.sram_end());
      if (const auto* region = machine.region_at(e.start)) end = std::min(end, region->end);
      for (std::size_t j = i + 1; j < sorted.size() && sorted[j].start < end; ++j)
        if (sorted[j].start >= e.payload_end && lifetimes_overlap(e, sorted[j])) end = std::min(end, sorted[j].start);
      // Entries starting at the same address as e (j < i after sorting) never matter:
      // they overlap e's payload, which placement forbids for overlapping lifetimes.
      e.end = std::max(end, e.payload_end);
      padding_bytes += e.end - e.payload_end;
    }

    const compiler::TileMemoryStats& st = stats[t];
    json by_kind = json::object();
    for (std::size_t k = 0; k < compiler::kAllocationKinds; ++k)
      by_kind[std::string(compiler::to_string(static_cast<compiler::AllocationKind>(k)))] = st.bytes_by_kind[k];
    json allocations = json::array();
    for (const Entry& e : sorted)
      allocations.push_back({{"start", e.start},
                             {"end", e.end},
                             {"payload_end", e.payload_end},
                             {"label", e.label},
                             {"kind", kMemoryKinds[e.kind]},
                             {"first", e.first},
                             {"last", e.last},
                             {"shards", e.shards}});
    total_entries += sorted.size();
    const std::uint32_t columns = std::max<std::uint32_t>(machine.columns, 1);
    tile_array.push_back({{"logical", t},
                          {"physical", {{"row", t / columns}, {"column", t % columns}}},
                          {"allocations", std::move(allocations)},
                          {"summary",
                           {{"capacity", st.capacity},
                            {"allocations", by_tile[t].size()},
                            {"peak_bytes", st.peak_live},
                            {"peak_step", st.peak_step},
                            {"free_at_peak", st.free_at_peak},
                            {"largest_hole", st.largest_hole_at_peak},
                            {"high_water", st.high_water},
                            {"fragmentation", st.fragmentation},
                            {"padding_bytes", padding_bytes},
                            {"bytes_by_kind", std::move(by_kind)}}}});
  }

  json regions = json::array();
  for (const auto& g : machine.regions) regions.push_back({{"name", g.name}, {"start", g.start}, {"end", g.end}});
  json kinds = json::array();
  for (const char* k : kMemoryKinds) kinds.push_back(k);
  json out;
  out["schema_version"] = kMemoryMapSchemaVersion;
  out["machine"] = {{"name", machine.name},
                    {"tiles", tiles},
                    {"rows", machine.rows},
                    {"columns", machine.columns},
                    {"sram_base", hex(machine.sram_base)},
                    {"sram_end", hex(machine.sram_end())}};
  out["profiling"] = profiling;
  out["start"] = machine.sram_base;
  out["end"] = machine.sram_end();
  out["steps"] = program.steps.size();
  out["loop"] = {{"begin", program.loop_begin}, {"end", program.loop_end}, {"count", program.loop_count}};
  out["kinds"] = std::move(kinds);
  out["regions"] = std::move(regions);
  out["reserved"] = std::move(reserved);
  out["program_allocations"] = program.allocations.size();
  out["entries"] = total_entries;
  out["labels"] = labels.labels();
  out["tiles"] = std::move(tile_array);
  return out;
}

}  // namespace tilevit::profile
