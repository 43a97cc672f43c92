#pragma once
// memory.html: one standalone page (no network, opens from file://) that draws a memory
// map (memory_map.hpp) on a canvas. The page source is src/profile/web/memory.html,
// compiled into the binary; this fills in the data, the map's compact columnar JSON
// (to_columnar_json, about 27 B per entry). Viewer features and its test hooks:
// docs/MEMORY_MAP.md.
#include <string>

#include "profile/memory_map.hpp"

namespace tilevit::profile {

// Throws Error(kExitBadInput) when the map is not consistent (to_columnar_json).
std::string render_memory_html(const MemoryMap& memory_map);

}  // namespace tilevit::profile
