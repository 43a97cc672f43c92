#include "target/machine_sections.hpp"

#include <algorithm>
#include <charconv>
#include <sstream>
#include <unordered_map>

namespace tilevit::target::detail {

bool is_power_of_two(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

bool is_identifier(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
}

std::string hex(std::uint64_t v) {
  std::ostringstream out;
  out << "0x" << std::uppercase << std::hex << v;
  return out.str();
}

std::string grouped(std::uint64_t v) {
  std::string digits = std::to_string(v), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += '_';
    out += digits[i];
  }
  return out;
}

std::string number_text(double v) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, v);  // shortest round-trip form
  return std::string(buffer, result.ptr);
}

std::vector<Section> split_sections(std::string_view text, const std::string& source) {
  auto fail = [&](int line, const std::string& what) -> void {
    throw Error(source + ":" + std::to_string(line) + ": " + what);
  };
  if (text.size() > kMaxMachineFileBytes)
    fail(1, "machine description of " + std::to_string(text.size()) + " bytes exceeds the limit of " +
                std::to_string(kMaxMachineFileBytes));
  if (trim(text).empty()) fail(1, "empty file; expected first line \"tilevit-machine 1\"");
  std::vector<Section> sections;
  // Hashed, not compared pairwise: a file of many keys must not take quadratic time.
  std::unordered_map<std::string, int> section_lines, key_lines;  // title or key -> line
  int line_number = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const auto newline = text.find('\n', pos);
    std::string_view raw = text.substr(pos, newline == std::string_view::npos ? std::string_view::npos : newline - pos);
    pos = newline == std::string_view::npos ? text.size() + 1 : newline + 1;
    ++line_number;
    if (line_number == 1) {
      const auto header = trim(raw);
      const auto space = header.find_first_of(" \t");
      if (header.substr(0, space) != kHeader || space == std::string_view::npos)
        fail(1, "expected first line \"tilevit-machine 1\", got \"" + std::string(header) + "\"");
      const auto version = trim(header.substr(space));
      if (version != std::to_string(kVersion))
        fail(1, "unsupported format version \"" + std::string(version) + "\" (this build reads version 1)");
      continue;
    }
    std::string_view line = raw;
    if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = trim(line);
    if (line.empty()) continue;
    if (line.front() == '[') {
      if (line.back() != ']') fail(line_number, "section header \"" + std::string(line) + "\" lacks a closing ]");
      const auto inner = trim(line.substr(1, line.size() - 2));
      const auto space = inner.find_first_of(" \t");
      Section s;
      s.kind = std::string(inner.substr(0, space));
      if (space != std::string_view::npos) s.label = std::string(trim(inner.substr(space)));
      s.line = line_number;
      if (!is_identifier(s.kind) || (space != std::string_view::npos && !is_identifier(s.label)))
        fail(line_number, "bad section header \"" + std::string(line) + "\"");
      if (const auto [it, fresh] = section_lines.emplace(s.title(), line_number); !fresh)
        fail(line_number, "section " + s.title() + " repeats the one at line " + std::to_string(it->second));
      key_lines.clear();
      sections.push_back(std::move(s));
      continue;
    }
    const auto eq = line.find('=');
    if (eq == std::string_view::npos) fail(line_number, "expected \"key = value\", got \"" + std::string(line) + "\"");
    Entry e{std::string(trim(line.substr(0, eq))), std::string(trim(line.substr(eq + 1))), line_number};
    if (sections.empty()) fail(line_number, e.key + ": key outside any [section]");
    Section& s = sections.back();
    if (!is_identifier(e.key)) fail(line_number, s.title() + " bad key \"" + e.key + "\"");
    if (e.value.empty()) fail(line_number, s.title() + " " + e.key + ": empty value");
    if (const auto [it, fresh] = key_lines.emplace(e.key, line_number); !fresh)
      fail(line_number, s.title() + " " + e.key + ": repeats the key at line " + std::to_string(it->second));
    s.entries.push_back(std::move(e));
  }
  return sections;
}

}  // namespace tilevit::target::detail
