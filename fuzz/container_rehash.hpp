#pragma once
// The .tvpkg container (packages and profiles) guards the header and every section with
// SHA-256, so a mutated file would almost never get past the hash checks. The targets
// rewrite every hash the table lets them find (each section's, then the header's) before
// decoding: the mutations reach the codecs and the verifier, not just the hash check.
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "package/container.hpp"

namespace tilevit::fuzz {

inline std::uint64_t little_endian(const std::byte* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = v << 8 | static_cast<std::uint8_t>(p[i]);
  return v;
}

// The table's layout: container.hpp (fixed header, kTableEntryBytes per section: name,
// version, offset, size, SHA-256; then the header's SHA-256).
inline void rehash_container(std::vector<std::byte>& bytes) {
  using namespace tilevit::package;
  if (bytes.size() < kFixedHeaderBytes) return;
  const std::uint64_t count = little_endian(bytes.data() + 16, 4);
  const std::uint64_t table_end = kFixedHeaderBytes + count * kTableEntryBytes;
  if (count > kMaxSections || table_end + 32 > bytes.size()) return;
  for (std::uint64_t i = 0; i < count; ++i) {
    std::byte* entry = bytes.data() + kFixedHeaderBytes + i * kTableEntryBytes;
    const std::uint64_t offset = little_endian(entry + kSectionNameBytes + 4, 8);
    const std::uint64_t size = little_endian(entry + kSectionNameBytes + 12, 8);
    if (offset > bytes.size() || size > bytes.size() - offset) continue;
    const Digest d = sha256(std::span(bytes).subspan(offset, size));
    std::memcpy(entry + kSectionNameBytes + 20, d.data(), d.size());
  }
  const Digest header = sha256(std::span(bytes).first(table_end));
  std::memcpy(bytes.data() + table_end, header.data(), header.size());
}


// The fuzz input as a file whose hashes are rewritten (rehash_container).
inline std::vector<std::byte> rehashed_file(const std::uint8_t* data, std::size_t size) {
  const auto* bytes = reinterpret_cast<const std::byte*>(data);
  std::vector<std::byte> file(bytes, bytes + size);
  rehash_container(file);
  return file;
}

}  // namespace tilevit::fuzz
