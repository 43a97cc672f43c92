#pragma once
// A container (package or profile) with one section's payload edited as text and the
// hashes recomputed, so a test reaches the decoder's own checks behind the SHA-256 ones.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "package/container.hpp"

namespace tilevit::test_support {

template <typename Edit>
std::vector<std::byte> with_section_edited(std::vector<std::byte> bytes, const std::string& name, Edit edit) {
  return package::with_sections_rewritten(std::move(bytes), [&](const std::string& section, std::string& text) {
    if (section == name) edit(text);
  });
}

// Replaces the first `from` in `text` (which must hold it) by `to`.
inline void replace_once(std::string& text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
}

}  // namespace tilevit::test_support
