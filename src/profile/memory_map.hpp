#pragma once
// The exact memory map of every tile of a compiled program: where each allocation sits in
// SRAM, for which supersteps, and the reserved ranges every tile shares. It is what
// memory.json holds and what the PNG overview and the HTML viewer draw. Schema
// (schema_version 1): docs/MEMORY_MAP.md.
#include <nlohmann/json.hpp>

#include "compiler/program.hpp"
#include "target/machine.hpp"

namespace tilevit::profile {

inline constexpr int kMemoryMapSchemaVersion = 1;

// Entry kinds of the map, in legend order: the four allocation kinds plus "padding"
// (alignment tails are part of an allocation: end > payload_end; the unreachable tail
// and SRAM outside every region are padding entries).
inline constexpr const char* kMemoryKinds[] = {"parameter", "activation", "scratch", "padding", "support"};
inline constexpr std::size_t kMemoryKindCount = 5;

// `profiling`: whether the build reserves the ranges with `when = profiling` (they then
// appear as support entries on every tile and count against each tile's capacity).
// Deterministic: the same inputs give the same JSON text. Throws Error(kExitBadInput)
// when an allocation names a tile outside the machine.
nlohmann::json memory_map_json(const target::MachineDescription& machine, const compiler::CompiledProgram& program,
                               bool profiling);

}  // namespace tilevit::profile
