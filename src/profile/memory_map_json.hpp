#pragma once
// The memory map (memory_map.hpp) as JSON: the only place the map becomes JSON, at the
// file edge. memory.json is to_json's text; memory.html embeds to_columnar_json's text
// for its script. Schemas: docs/MEMORY_MAP.md.
#include <string>

#include <nlohmann/json.hpp>

#include "profile/memory_map.hpp"

namespace tilevit::profile {

inline constexpr int kMemoryMapSchemaVersion = 3;  // 2: lifetimes in phases; 3: over_time

// memory.json (schema_version 3). Deterministic: the same map gives the same text.
nlohmann::json to_json(const MemoryMap& map);

// memory.html's data: the same map as compact columnar JSON text, one array per entry
// field instead of one object per entry (about 27 B per entry; a json tree of 120K
// entries would be a million nodes). Throws Error(kExitBadInput) when the map is not
// consistent: an empty SRAM range, or an entry outside it or with its payload_end outside
// [start, end].
std::string to_columnar_json(const MemoryMap& map);

// Memory over time (MemoryMap::over_time): memory.json's "over_time" and memory.html's
// #memory-time data. Schema: docs/MEMORY_MAP.md, "Memory over time".
nlohmann::json over_time_json(const MemoryMap& map);

}  // namespace tilevit::profile
