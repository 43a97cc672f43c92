#include "profile/rows.hpp"

namespace tilevit::profile {

std::vector<std::uint32_t> row_groups_of(const Profile& p) {
  std::vector<std::uint32_t> out;
  out.reserve(p.samples.size());
  for (std::uint32_t g = 0; g < p.row_groups.size(); ++g) out.insert(out.end(), p.row_groups[g].rows, g);
  out.resize(p.samples.size(), p.row_groups.empty() ? 0 : std::uint32_t(p.row_groups.size() - 1));
  return out;
}

std::uint32_t tile_rows(const Profile& p) {
  std::uint32_t links = 0;
  for (const auto& g : p.row_groups)
    if (g.name == kLinkRowGroup) links += g.rows;
  return p.tiles - std::min(links, p.tiles);
}

namespace {

std::string name_in_group(const Profile::RowGroup& g, std::uint32_t row) {
  return g.name + (g.name == kLinkRowGroup ? " " : " t") + std::to_string(row);
}

}  // namespace

std::string row_name(const Profile& p, std::uint32_t row) {
  for (const auto& g : p.row_groups) {
    if (row < g.rows) return name_in_group(g, row);
    row -= g.rows;
  }
  return "tile " + std::to_string(row);
}

std::vector<std::string> row_names(const Profile& p) {
  std::vector<std::string> names;
  names.reserve(p.samples.size());
  for (const auto& g : p.row_groups)
    for (std::uint32_t r = 0; r < g.rows && names.size() < p.samples.size(); ++r) names.push_back(name_in_group(g, r));
  for (std::uint32_t t = std::uint32_t(names.size()); t < p.samples.size(); ++t) names.push_back("tile " + std::to_string(t));
  return names;
}

std::string rows_text(const Profile& p) {
  const std::uint32_t tiles = tile_rows(p);
  std::string text = std::to_string(tiles) + (tiles == 1 ? " tile" : " tiles");
  if (p.row_groups.empty()) return text;
  std::string chips;
  std::uint32_t count = 0;
  for (const auto& g : p.row_groups)
    if (g.name != kLinkRowGroup) chips += (count++ ? " + " : "") + std::to_string(g.rows);
  text += " on " + std::to_string(count) + (count == 1 ? " chip (" : " chips (") + chips + ")";
  if (const std::uint32_t links = p.tiles - tiles; links > 0) text += ", " + std::to_string(links) + (links == 1 ? " link row" : " link rows");
  return text;
}

}  // namespace tilevit::profile
