#pragma once
// The rows of a profile: the tiles of one chip, or a multi-chip profile's row groups
// (Profile::row_groups: each chip's tiles, then a row per link). Which group a row is in
// and what the text outputs call it, as model.html and compare.html label rows.
#include <cstdint>
#include <string>
#include <vector>

#include "profile/profile.hpp"

namespace tilevit::profile {

// Per row, the index of its group in row_groups; 0 for every row of a profile without groups.
std::vector<std::uint32_t> row_groups_of(const Profile& profile);

// The rows that are tiles: all but the link rows.
std::uint32_t tile_rows(const Profile& profile);

// "tile 5"; in a multi-chip profile "chip 1 t5" or "links 0".
std::string row_name(const Profile& profile, std::uint32_t row);
// Every row's name, in row order (linear in the rows, whatever the groups).
std::vector<std::string> row_names(const Profile& profile);

// "16 tiles"; several chips: "32 tiles on 2 chips (16 + 16), 1 link row".
std::string rows_text(const Profile& profile);

}  // namespace tilevit::profile
