#pragma once
// The .tvpkg container: a versioned, deterministic binary file of named, hashed,
// 64-byte-aligned sections. It knows nothing of what the sections mean; the compiler
// defines them (docs/PACKAGE_FORMAT.md lists the layout and every validation rule).
//
//   ContainerWriter w;
//   w.add_section("machine", 1, bytes);
//   w.write("model.tvpkg");                       // atomic; bytes depend only on inputs
//
//   auto c = Container::open("model.tvpkg");     // fully validated, hashes included
//   ByteReader r = c.reader(c.require("machine", 1));
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "package/byte_io.hpp"
#include "package/sha256.hpp"

namespace tilevit::package {

inline constexpr char kMagic[8] = {'T', 'V', 'P', 'K', 'G', '\0', '\r', '\n'};
inline constexpr std::uint32_t kFormatVersion = 1;       // the only version this build reads
inline constexpr std::uint32_t kMaxSections = 4096;
inline constexpr std::size_t kSectionNameBytes = 32;     // fixed field, NUL padded
inline constexpr std::uint64_t kSectionAlignment = 64;
inline constexpr std::size_t kFixedHeaderBytes = 20;     // magic, version, flags, count
inline constexpr std::size_t kTableEntryBytes = 84;      // name, version, offset, size, SHA-256
inline constexpr std::size_t kMinPackageBytes = kFixedHeaderBytes + 32;  // no sections
inline constexpr std::uint64_t kDefaultMaxPackageBytes = std::uint64_t{8} << 30;

// 1 to 32 characters from [a-z0-9_.-].
bool is_valid_section_name(std::string_view name);

struct Section {
  std::string name;
  std::uint32_t version = 0;  // of the section's own encoding, chosen by its producer
  std::uint64_t offset = 0;   // from the start of the file, a multiple of 64
  std::uint64_t size = 0;     // payload bytes, excluding padding
  Digest sha256{};            // of the payload bytes
};

class ContainerWriter {
 public:
  // Sections are written in insertion order. Throws on an invalid or duplicate name or
  // more than kMaxSections sections.
  void add_section(std::string name, std::uint32_t version, std::vector<std::byte> payload);

  void write(const std::string& path) const;  // atomically (temporary + rename)
  std::vector<std::byte> bytes() const;        // the exact file contents

  std::size_t section_count() const { return sections_.size(); }

 private:
  struct Pending {
    std::string name;
    std::uint32_t version;
    std::vector<std::byte> payload;
    Digest sha256;
  };

  std::vector<std::byte> header() const;  // fixed header + table + header SHA-256
  template <typename Sink>
  void emit(Sink&& sink) const;

  std::vector<Pending> sections_;
};

class Container {
 public:
  // Memory-maps `path` (refusing files over max_bytes before mapping) and validates it.
  // Errors name the path.
  static Container open(const std::string& path, std::uint64_t max_bytes = kDefaultMaxPackageBytes);
  // Validates an in-memory package; `name` stands in for the path in errors.
  static Container from_bytes(std::vector<std::byte> bytes, std::string name);

  const std::string& name() const { return name_; }
  std::uint32_t flags() const { return flags_; }
  const std::vector<Section>& sections() const { return sections_; }

  const Section* find(std::string_view name) const;  // nullptr if absent
  // Throws "<file>: missing required section ..." or "... has version 2, expected 1".
  const Section& require(std::string_view name, std::uint32_t version) const;

  // `section` must be one of sections() (of this Container or a copy of it).
  std::span<const std::byte> payload(const Section& section) const;
  // A reader over the payload with context `<file>: section "<name>"` and file offsets.
  ByteReader reader(const Section& section) const;

  std::span<const std::byte> bytes() const { return data_; }  // the whole file
  std::string sha256_hex() const;  // of the whole file; hashes it on every call

 private:
  struct Storage;

  Container(std::shared_ptr<const Storage> storage, std::string name);
  void validate();

  std::shared_ptr<const Storage> storage_;  // shared: copies of a Container are cheap
  std::span<const std::byte> data_;
  std::string name_;
  std::uint32_t flags_ = 0;
  std::vector<Section> sections_;
};

// The container `bytes` written again with each section's payload passed through
// `edit(name, payload)` (as bytes in a string) and every hash recomputed: what tests and
// tools/rebuild_fuzz_fixtures use to reach a decoder's checks behind the SHA-256 ones.
std::vector<std::byte> with_sections_rewritten(std::vector<std::byte> bytes,
                                               const std::function<void(const std::string&, std::string&)>& edit);

}  // namespace tilevit::package
