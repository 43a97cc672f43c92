#pragma once
// The machine description's text layer: "[section label]" headers and "key = value"
// lines, split and checked for repeats, and a reader that pulls typed values out of one
// section. Shared by the chip's sections (machine.cpp) and the system's (system.cpp).
#include <charconv>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "support/error.hpp"

namespace tilevit::target::detail {

inline constexpr std::string_view kHeader = "tilevit-machine";
inline constexpr int kVersion = 1;
inline constexpr std::size_t kMaxMachineFileBytes = 1 << 20;

bool is_power_of_two(std::uint64_t v);
std::string_view trim(std::string_view s);
bool is_identifier(std::string_view s);
std::string hex(std::uint64_t v);
// 1500000000 -> "1_500_000_000": canonical output stays readable.
std::string grouped(std::uint64_t v);
std::string number_text(double v);  // shortest round-trip form

struct Entry {
  std::string key, value;
  int line = 0;
};

struct Section {
  std::string kind, label;  // "[region standard]" -> kind "region", label "standard"
  int line = 0;
  std::vector<Entry> entries;
  std::string title() const { return "[" + kind + (label.empty() ? "" : " " + label) + "]"; }
};

// Pulls typed values out of one section. Missing keys are collected and reported by
// finish() after unknown keys, because a misspelt key shows up as both and the misspelling
// is the useful message.
class SectionReader {
 public:
  SectionReader(const Section& section, const std::string& source)
      : section_(section), source_(source), used_(section.entries.size(), false) {}

  [[noreturn]] void fail(int line, std::string_view key, const std::string& what) const {
    throw Error(source_ + ":" + std::to_string(line) + ": " + section_.title() + " " + std::string(key) + ": " +
                what);
  }
  int line_of(std::string_view key) const {
    for (const auto& e : section_.entries)
      if (e.key == key) return e.line;
    return section_.line;
  }

  std::uint64_t integer(std::string_view key, std::uint64_t min, std::uint64_t max) {
    const Entry* e = take(key);
    if (!e) return min;
    const std::string_view v = e->value;
    int base = 10;
    std::string digits;
    std::string_view body = v;
    if (body.size() > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')) base = 16, body.remove_prefix(2);
    bool ok = !body.empty() && body.front() != '_' && body.back() != '_';
    for (char c : body) {
      if (c == '_') continue;
      const bool digit = (c >= '0' && c <= '9') ||
                         (base == 16 && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')));
      ok = ok && digit;
      digits += c;
    }
    std::uint64_t value = 0;
    if (ok) {
      const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), value, base);
      if (r.ec == std::errc::result_out_of_range) fail(e->line, key, "value " + e->value + " is out of range");
      ok = r.ec == std::errc() && r.ptr == digits.data() + digits.size();
    }
    if (!ok) fail(e->line, key, "expected an integer, got \"" + e->value + "\"");
    if (value < min || value > max)
      fail(e->line, key,
           "value " + e->value + " is out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]");
    return value;
  }
  std::uint32_t u32(std::string_view key, std::uint64_t min = 0,
                    std::uint64_t max = std::numeric_limits<std::uint32_t>::max()) {
    return static_cast<std::uint32_t>(integer(key, min, max));
  }

  // A non-negative, finite decimal number ("127.9", "294", "1_000.5", "1e3").
  double number(std::string_view key) {
    const Entry* e = take(key);
    if (!e) return 0;
    std::string digits;
    for (char c : e->value)
      if (c != '_') digits += c;
    double value = 0;
    const bool starts_with_digit = !digits.empty() && digits[0] >= '0' && digits[0] <= '9';
    const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (!starts_with_digit || r.ec != std::errc() || r.ptr != digits.data() + digits.size() || !std::isfinite(value))
      fail(e->line, key, "expected a non-negative number, got \"" + e->value + "\"");
    return value;
  }

  std::string text(std::string_view key) {
    const Entry* e = take(key);
    return e ? e->value : std::string();
  }
  bool has(std::string_view key) const {
    for (const Entry& e : section_.entries)
      if (e.key == key) return true;
    return false;
  }
  // A key that may be absent (empty then).
  std::string optional_text(std::string_view key) {
    for (std::size_t i = 0; i < section_.entries.size(); ++i)
      if (section_.entries[i].key == key) return used_[i] = true, section_.entries[i].value;
    return {};
  }

  bool boolean(std::string_view key) {
    const Entry* e = take(key);
    if (!e) return false;
    if (e->value == "yes") return true;
    if (e->value == "no") return false;
    fail(e->line, key, "expected yes or no, got \"" + e->value + "\"");
  }

  template <typename Enum>
  Enum choice(std::string_view key, std::initializer_list<Enum> options) {
    const Entry* e = take(key);
    if (!e) return *options.begin();
    std::string names;
    for (Enum o : options) {
      if (e->value == to_string(o)) return o;
      names += (names.empty() ? "" : ", ") + std::string(to_string(o));
    }
    fail(e->line, key, "expected one of " + names + ", got \"" + e->value + "\"");
  }

  void finish() const {
    for (std::size_t i = 0; i < section_.entries.size(); ++i)
      if (!used_[i]) fail(section_.entries[i].line, section_.entries[i].key, "unknown key");
    if (!missing_.empty()) fail(section_.line, missing_.front(), "missing required key");
  }

 private:
  const Entry* take(std::string_view key) {
    for (std::size_t i = 0; i < section_.entries.size(); ++i)
      if (section_.entries[i].key == key) {
        used_[i] = true;
        return &section_.entries[i];
      }
    missing_.emplace_back(key);
    return nullptr;
  }

  const Section& section_;
  const std::string& source_;
  std::vector<bool> used_;
  std::vector<std::string> missing_;
};

// The sections of a description, in file order; the first line must be the header.
std::vector<Section> split_sections(std::string_view text, const std::string& source);

}  // namespace tilevit::target::detail
