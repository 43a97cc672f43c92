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
  const auto original = package::Container::from_bytes(std::move(bytes), "original");
  package::ContainerWriter w;
  for (const auto& s : original.sections()) {
    const auto payload = original.payload(s);
    std::string text(reinterpret_cast<const char*>(payload.data()), payload.size());
    if (s.name == name) edit(text);
    const auto* p = reinterpret_cast<const std::byte*>(text.data());
    w.add_section(s.name, s.version, std::vector<std::byte>(p, p + text.size()));
  }
  return w.bytes();
}

// Replaces the first `from` in `text` (which must hold it) by `to`.
inline void replace_once(std::string& text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
}

}  // namespace tilevit::test_support
