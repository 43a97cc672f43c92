#include "package/container.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <ostream>
#include <unordered_set>

#include "support/atomic_file.hpp"
#include "support/error.hpp"

namespace tilevit::package {
namespace {

constexpr std::size_t kDigestBytes = 32;
static_assert(kTableEntryBytes == kSectionNameBytes + 4 + 8 + 8 + kDigestBytes);

std::uint64_t align_up(std::uint64_t n) { return (n + kSectionAlignment - 1) / kSectionAlignment * kSectionAlignment; }

std::span<const std::byte> magic_bytes() { return std::as_bytes(std::span(kMagic)); }

// Names in messages: printable ASCII as-is, anything else as \xNN, so the message stays
// one line whatever bytes a corrupted table holds.
std::string quote(std::string_view text) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out = "\"";
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7F && c != '"' && c != '\\') {
      out.push_back(c);
    } else {
      out += "\\x";
      out.push_back(kDigits[u >> 4]);
      out.push_back(kDigits[u & 0xF]);
    }
  }
  return out + "\"";
}

std::string hex32(std::uint32_t v) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out = "0x";
  for (int shift = 28; shift >= 0; shift -= 4) out.push_back(kDigits[(v >> shift) & 0xF]);
  return out;
}

std::string str(std::uint64_t v) { return std::to_string(v); }

[[noreturn]] void writer_error(const std::string& message) {
  throw Error("package writer: " + message, kExitInternal);
}

}  // namespace

bool is_valid_section_name(std::string_view name) {
  if (name.empty() || name.size() > kSectionNameBytes) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
  });
}

// ---- ContainerWriter ----

void ContainerWriter::add_section(std::string name, std::uint32_t version, std::vector<std::byte> payload) {
  if (!is_valid_section_name(name))
    writer_error("invalid section name " + quote(name) + " (use 1-32 characters from [a-z0-9_.-])");
  for (const Pending& s : sections_)
    if (s.name == name) writer_error("duplicate section " + quote(name));
  if (sections_.size() >= kMaxSections) writer_error("more than " + str(kMaxSections) + " sections");
  const Digest digest = sha256(payload);
  sections_.push_back({std::move(name), version, std::move(payload), digest});
}

std::vector<std::byte> ContainerWriter::header() const {
  ByteWriter w;
  w.write_bytes(magic_bytes());
  w.write_u32(kFormatVersion);
  w.write_u32(0);  // flags: none defined in version 1
  w.write_u32(static_cast<std::uint32_t>(sections_.size()));
  std::uint64_t end = kFixedHeaderBytes + kTableEntryBytes * sections_.size() + kDigestBytes;
  for (const Pending& s : sections_) {
    const std::uint64_t offset = align_up(end);
    w.write_bytes(std::as_bytes(std::span(s.name.data(), s.name.size())));
    w.write_zeros(kSectionNameBytes - s.name.size());
    w.write_u32(s.version);
    w.write_u64(offset);
    w.write_u64(s.payload.size());
    w.write_bytes(std::as_bytes(std::span(s.sha256)));
    end = offset + s.payload.size();
  }
  const Digest header_digest = sha256(w.bytes());
  w.write_bytes(std::as_bytes(std::span(header_digest)));
  return std::move(w).bytes();
}

// Feeds the file to `sink` in order: header, then per section zero padding and payload.
template <typename Sink>
void ContainerWriter::emit(Sink&& sink) const {
  static constexpr std::byte kZeros[kSectionAlignment] = {};
  const std::vector<std::byte> head = header();
  sink(std::span<const std::byte>(head));
  std::uint64_t end = head.size();
  for (const Pending& s : sections_) {
    sink(std::span<const std::byte>(kZeros, align_up(end) - end));
    sink(std::span<const std::byte>(s.payload));
    end = align_up(end) + s.payload.size();
  }
}

std::vector<std::byte> ContainerWriter::bytes() const {
  std::vector<std::byte> out;
  emit([&](std::span<const std::byte> chunk) { out.insert(out.end(), chunk.begin(), chunk.end()); });
  return out;
}

void ContainerWriter::write(const std::string& path) const {
  // Streamed, so a multi-GB package is never copied into one buffer.
  write_file_atomically(path, [&](std::ostream& out) {
    emit([&](std::span<const std::byte> chunk) {
      out.write(reinterpret_cast<const char*>(chunk.data()), static_cast<std::streamsize>(chunk.size()));
    });
  });
}

// ---- Container ----

struct Container::Storage {
  std::vector<std::byte> owned;  // from_bytes
  void* map = nullptr;           // open
  std::size_t map_size = 0;

  Storage() = default;
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage() {
    if (map != nullptr) ::munmap(map, map_size);
  }
  std::span<const std::byte> bytes() const {
    if (map != nullptr) return {static_cast<const std::byte*>(map), map_size};
    return owned;
  }
};

Container::Container(std::shared_ptr<const Storage> storage, std::string name)
    : storage_(std::move(storage)), data_(storage_->bytes()), name_(std::move(name)) {}

Container Container::from_bytes(std::vector<std::byte> bytes, std::string name) {
  auto storage = std::make_shared<Storage>();
  storage->owned = std::move(bytes);
  Container c(std::move(storage), std::move(name));
  c.validate();
  return c;
}

Container Container::open(const std::string& path, std::uint64_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    throw Error(path + ": cannot stat: " + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(path + ": not a regular file");
  }
  const auto file_size = static_cast<std::uint64_t>(st.st_size);
  if (file_size > max_bytes) {
    ::close(fd);
    throw Error(path + ": file is " + str(file_size) + " bytes, more than the limit of " + str(max_bytes));
  }
  if (file_size < kMinPackageBytes) {  // also avoids mapping an empty file
    ::close(fd);
    throw Error(path + ": file is " + str(file_size) + " bytes, smaller than the " + str(kMinPackageBytes) +
                "-byte package header");
  }
  // Packages are replaced by rename, never rewritten in place, so a mapping stays valid.
  void* mapped = ::mmap(nullptr, file_size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_errno = errno;
  ::close(fd);  // the mapping keeps the file alive
  if (mapped == MAP_FAILED) throw Error(path + ": cannot memory-map: " + std::strerror(map_errno));
  auto storage = std::make_shared<Storage>();
  storage->map = mapped;
  storage->map_size = file_size;
  Container c(std::move(storage), path);
  c.validate();
  return c;
}

// Checks everything the format promises before any section is handed out. Cheap
// structural checks come first, so a forged table is refused before anything is sized
// from it; the payload hashes come last.
void Container::validate() {
  const std::string& file = name_;
  const std::uint64_t size = data_.size();
  auto fail = [&](const std::string& message) -> void { throw Error(file + ": " + message); };

  if (size >= sizeof kMagic && !std::equal(magic_bytes().begin(), magic_bytes().end(), data_.begin()))
    fail("not a tilevit package (bad magic)");
  if (size < kMinPackageBytes)
    fail("file is " + str(size) + " bytes, smaller than the " + str(kMinPackageBytes) + "-byte package header");

  ByteReader head(data_, file + ": header");
  head.skip(sizeof kMagic);
  const std::uint32_t version = head.read_u32();
  // A different version may lay the header out differently, so it is refused before the
  // header hash, which is defined by version 1's layout.
  if (version != kFormatVersion)
    fail("unsupported package format version " + str(version) + " (this build reads version " +
         str(kFormatVersion) + " only)");
  const std::uint32_t flags = head.read_u32();
  const std::uint32_t count = head.read_u32();
  if (count > kMaxSections) fail("section count " + str(count) + " exceeds the limit of " + str(kMaxSections));
  const std::uint64_t table_end = kFixedHeaderBytes + std::uint64_t{kTableEntryBytes} * count;
  const std::uint64_t header_end = table_end + kDigestBytes;
  if (header_end > size)
    fail("section table (" + str(count) + " sections, header ends at byte " + str(header_end) +
         ") runs past the end of the file (" + str(size) + " bytes)");
  Digest stored{};
  std::memcpy(stored.data(), data_.data() + table_end, kDigestBytes);
  if (sha256(data_.first(table_end)) != stored) fail("header corrupted (SHA-256 mismatch)");
  if (flags != 0) fail("unsupported flags " + hex32(flags) + " (version 1 defines none)");
  flags_ = flags;

  std::vector<Section> sections;
  sections.reserve(count);  // bounded by kMaxSections and by the file size, checked above
  std::unordered_set<std::string> names;
  std::uint64_t prev_end = header_end;
  for (std::uint32_t i = 0; i < count; ++i) {
    Section s;
    const auto raw_name = head.read_bytes(kSectionNameBytes);
    const auto* chars = reinterpret_cast<const char*>(raw_name.data());
    const std::size_t length = std::find(chars, chars + kSectionNameBytes, '\0') - chars;
    s.name.assign(chars, length);
    const bool padded = std::all_of(chars + length, chars + kSectionNameBytes, [](char c) { return c == '\0'; });
    std::size_t shown = kSectionNameBytes;  // the field without its trailing NULs
    while (shown > 0 && chars[shown - 1] == '\0') --shown;
    if (!is_valid_section_name(s.name) || !padded)
      fail("section " + str(i) + ": invalid name " + quote(std::string_view(chars, shown)) +
           " (1-32 characters from [a-z0-9_.-], NUL padded)");
    if (!names.insert(s.name).second) fail("duplicate section " + quote(s.name));
    s.version = head.read_u32();
    s.offset = head.read_u64();
    s.size = head.read_u64();
    std::memcpy(s.sha256.data(), head.read_bytes(kDigestBytes).data(), kDigestBytes);

    const std::string where = "section " + quote(s.name) + ": ";
    if (s.offset % kSectionAlignment != 0)
      fail(where + "offset " + str(s.offset) + " is not " + str(kSectionAlignment) + "-byte aligned");
    if (s.size > std::numeric_limits<std::uint64_t>::max() - s.offset)
      fail(where + "offset " + str(s.offset) + " + size " + str(s.size) + " overflows");
    if (i > 0 && s.offset < sections.back().offset)
      fail(where + "out of order: offset " + str(s.offset) + " is before section " + quote(sections.back().name) +
           " at " + str(sections.back().offset));
    if (s.offset < prev_end)
      fail(where + "offset " + str(s.offset) + " overlaps " +
           (i == 0 ? std::string("the header") : "section " + quote(sections.back().name)) + " (ends at byte " +
           str(prev_end) + ")");
    // The layout is canonical (each payload at the first aligned offset after the
    // previous one), so there is no unhashed gap in which bytes could hide.
    if (s.offset != align_up(prev_end))
      fail(where + "offset " + str(s.offset) + " leaves a gap (expected " + str(align_up(prev_end)) + ")");
    if (s.offset + s.size > size)
      fail(where + "bytes " + str(s.offset) + ".." + str(s.offset + s.size) + " run past the end of the file (" +
           str(size) + " bytes)");
    prev_end = s.offset + s.size;
    sections.push_back(std::move(s));
  }

  if (size > prev_end)
    fail(str(size - prev_end) + " bytes of trailing data after the " +
         (count == 0 ? std::string("header") : "last section") + " (data ends at byte " + str(prev_end) +
         ", file is " + str(size) + " bytes)");

  // Padding must be zero: it is not covered by any hash, and the file must be canonical.
  std::uint64_t gap_start = header_end;
  for (const Section& s : sections) {
    for (std::uint64_t at = gap_start; at < s.offset; ++at)
      if (data_[at] != std::byte{0})
        fail("non-zero padding byte at " + str(at) + " before section " + quote(s.name));
    gap_start = s.offset + s.size;
  }
  for (const Section& s : sections)
    if (sha256(data_.subspan(s.offset, s.size)) != s.sha256)
      fail("section " + quote(s.name) + " corrupted (SHA-256 mismatch)");

  sections_ = std::move(sections);
}

const Section* Container::find(std::string_view name) const {
  for (const Section& s : sections_)
    if (s.name == name) return &s;
  return nullptr;
}

const Section& Container::require(std::string_view name, std::uint32_t version) const {
  const Section* s = find(name);
  if (s == nullptr) throw Error(name_ + ": missing required section " + quote(name));
  if (s->version != version)
    throw Error(name_ + ": section " + quote(name) + " has version " + str(s->version) + ", this build reads version " +
                str(version));
  return *s;
}

std::span<const std::byte> Container::payload(const Section& section) const {
  // Matched by name rather than address, so a Section copied from another copy of this
  // Container works; anything else would read unvalidated bytes.
  const Section* own = find(section.name);
  if (own == nullptr || own->offset != section.offset || own->size != section.size)
    throw Error(name_ + ": section " + quote(section.name) + " does not belong to this package", kExitInternal);
  return data_.subspan(section.offset, section.size);
}

ByteReader Container::reader(const Section& section) const {
  return ByteReader(payload(section), name_ + ": section " + quote(section.name), section.offset);
}

std::string Container::sha256_hex() const { return package::sha256_hex(data_); }

std::vector<std::byte> with_sections_rewritten(std::vector<std::byte> bytes,
                                               const std::function<void(const std::string&, std::string&)>& edit) {
  const Container original = Container::from_bytes(std::move(bytes), "original");
  ContainerWriter w;
  for (const Section& s : original.sections()) {
    const auto payload = original.payload(s);
    std::string text(reinterpret_cast<const char*>(payload.data()), payload.size());
    edit(s.name, text);
    const auto* p = reinterpret_cast<const std::byte*>(text.data());
    w.add_section(s.name, s.version, std::vector<std::byte>(p, p + text.size()));
  }
  return w.bytes();
}

}  // namespace tilevit::package
