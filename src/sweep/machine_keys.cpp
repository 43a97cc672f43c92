#include "sweep/machine_keys.hpp"

#include <algorithm>

#include "support/error.hpp"

namespace tilevit::sweep {
namespace {

using target::MachineDescription;

std::uint32_t u32(std::uint64_t v) { return static_cast<std::uint32_t>(v); }

void set_tiles(MachineDescription& m, std::uint64_t tiles) {
  if (tiles % m.columns != 0)
    throw Error("tiles " + std::to_string(tiles) + ": not a whole number of the base's rows of " +
                std::to_string(m.columns) + " columns (sweep rows or columns instead)");
  m.tiles = u32(tiles);
  m.rows = u32(tiles / m.columns);
}

void set_rows(MachineDescription& m, std::uint64_t rows) {
  m.rows = u32(rows);
  m.tiles = u32(rows * m.columns);
}

void set_columns(MachineDescription& m, std::uint64_t columns) {
  m.columns = u32(columns);
  m.tiles = u32(std::uint64_t{m.rows} * columns);
}

// SRAM grows or shrinks at its end: regions past the new end are dropped and the one it
// cuts ends there; growing extends the last region; a reserved range that ended at the old
// end (the C600's unreachable tail) moves with it; others past the new end are dropped.
void set_sram_size(MachineDescription& m, std::uint64_t size) {
  const std::uint32_t old_end = m.sram_end();
  if (std::uint64_t{m.sram_base} + size > (1ull << 32))
    throw Error("sram_size " + std::to_string(size) + ": SRAM would end beyond the 32-bit address space");
  m.sram_size = u32(size);
  const std::uint32_t new_end = m.sram_end();
  std::erase_if(m.regions, [&](const target::MemoryRegion& r) { return r.start >= new_end; });
  for (auto& r : m.regions)
    if (r.end > new_end || r.end == old_end) r.end = new_end;
  for (auto& r : m.reserved)
    if (r.end() == old_end) r.start = new_end >= r.size ? new_end - r.size : 0;
  std::erase_if(m.reserved, [&](const target::ReservedRange& r) { return r.end() > new_end; });
}

void set_clock(MachineDescription& m, std::uint64_t hz) { m.clock_hz = hz; }
void set_send(MachineDescription& m, std::uint64_t b) { m.exchange_send_bytes_per_cycle = u32(b); }
void set_receive(MachineDescription& m, std::uint64_t b) { m.exchange_receive_bytes_per_cycle = u32(b); }
void set_exchange(MachineDescription& m, std::uint64_t b) {
  set_send(m, b);
  set_receive(m, b);
}

// Multi-chip figures (chips, IPU-Link bandwidth and latency) join this table once the
// machine description holds them.
constexpr MachineKey kKeys[] = {
    {"rows", "[machine] rows: tile rows (tiles = rows x columns)", 1, 1 << 12, "tiles", set_rows},
    {"columns", "[machine] columns: tiles per row (tiles = rows x columns)", 1, 1 << 12, "tiles", set_columns},
    {"tiles", "[machine] tiles: rows become tiles / the base's columns", 1, 1 << 20, "", set_tiles},
    {"sram_size", "[memory] sram_size: bytes per tile; the last region and a reserved range at the end move",
     1 << 16, 1u << 31, "", set_sram_size},
    {"clock_hz", "[machine] clock_hz", 1'000'000, 100'000'000'000ull, "", set_clock},
    {"exchange_bytes_per_cycle", "[exchange] send_bytes_per_cycle and receive_bytes_per_cycle together", 1, 1 << 16,
     "", set_exchange},
    {"send_bytes_per_cycle", "[exchange] send_bytes_per_cycle", 1, 1 << 16, "exchange_bytes_per_cycle", set_send},
    {"receive_bytes_per_cycle", "[exchange] receive_bytes_per_cycle", 1, 1 << 16, "exchange_bytes_per_cycle",
     set_receive},
};

}  // namespace

std::span<const MachineKey> machine_keys() { return kKeys; }

const MachineKey* find_machine_key(std::string_view name) {
  for (const MachineKey& k : kKeys)
    if (k.name == name) return &k;
  return nullptr;
}

target::MachineDescription apply_machine_keys(const target::MachineDescription& base,
                                              const std::vector<MachineSetting>& settings) {
  target::MachineDescription m = base;
  std::vector<MachineSetting> ordered = settings;
  std::sort(ordered.begin(), ordered.end(), [](const MachineSetting& a, const MachineSetting& b) { return a.first < b.first; });
  for (const auto& [key, value] : ordered) {
    key->apply(m, value);
    m.name += " " + std::string(key->name) + "=" + std::to_string(value);
  }
  if (ordered.empty()) return m;
  return target::parse_machine(target::to_text(m), m.name);
}

}  // namespace tilevit::sweep
