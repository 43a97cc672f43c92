#pragma once
// memory.html: one standalone page (no network, opens from file://) that draws a memory
// map (memory_map.hpp) on a canvas. The page source is src/profile/web/memory.html,
// compiled into the binary; this fills in the data as compact columnar JSON (about 40 B
// per allocation). Viewer features and its test hooks: docs/MEMORY_MAP.md.
#include <string>

#include <nlohmann/json.hpp>

namespace tilevit::profile {

// Throws Error(kExitBadInput) when `memory_map` is not a schema_version 1 memory map.
std::string render_memory_html(const nlohmann::json& memory_map);

}  // namespace tilevit::profile
