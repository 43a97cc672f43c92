#pragma once
// Little-endian record encoding for package sections. The writer appends; the reader
// bounds-checks every read and reports failures as one-line Errors that name where the
// bytes came from (file, section, record) and the byte offset, e.g.
//   model.tvpkg: section "program" tile 12: record truncated at byte 4096 (need 8, have 3)
// Counts and string lengths are u32. read_count() checks a count against both a caller
// limit and the bytes left before the caller allocates anything for it.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tilevit::package {

class ByteWriter {
 public:
  void write_u8(std::uint8_t v);
  void write_u16(std::uint16_t v);
  void write_u32(std::uint32_t v);
  void write_u64(std::uint64_t v);
  void write_i32(std::int32_t v);
  void write_i64(std::int64_t v);
  void write_f32(float v);   // IEEE bits as-is: NaN payloads and -0 survive
  void write_f64(double v);
  void write_count(std::size_t count);          // u32; throws if it does not fit
  void write_string(std::string_view text);     // u32 length, then the bytes (no NUL)
  void write_bytes(std::span<const std::byte> bytes);
  void write_zeros(std::size_t n);
  void align(std::size_t alignment);            // zero-pad to a multiple; power of two

  // Overwrite a u32 written earlier (e.g. a count known only after the records).
  void patch_u32(std::size_t at, std::uint32_t v);

  std::size_t size() const { return bytes_.size(); }
  const std::vector<std::byte>& bytes() const& { return bytes_; }
  std::vector<std::byte> bytes() && { return std::move(bytes_); }

 private:
  std::vector<std::byte> bytes_;
};

class ByteReader {
 public:
  // `context` prefixes every error; `base_offset` is added to positions in messages so
  // they are file offsets when the span is part of a file (Container::reader does that).
  ByteReader(std::span<const std::byte> data, std::string context, std::uint64_t base_offset = 0);

  std::uint8_t read_u8();
  std::uint16_t read_u16();
  std::uint32_t read_u32();
  std::uint64_t read_u64();
  std::int32_t read_i32();
  std::int64_t read_i64();
  float read_f32();
  double read_f64();

  // A u32 count of elements of `element_bytes` each (>= 1; for variable-size records pass
  // the smallest encoded size). Throws if count > max_count or
  // count * element_bytes > remaining(), so the caller may then reserve(count).
  std::uint32_t read_count(std::uint32_t max_count, std::size_t element_bytes);
  // u32 length, at most max_bytes, then the bytes.
  std::string read_string(std::size_t max_bytes);
  std::span<const std::byte> read_bytes(std::size_t n);
  void skip(std::size_t n);
  // Skip to the next multiple of `alignment` (relative to the start of this reader's
  // span), requiring the padding to be zero so stray bytes cannot hide there.
  void skip_padding(std::size_t alignment);
  // A reader over the next n bytes with " label" appended to the context; this reader
  // moves past them. For length-delimited records.
  ByteReader sub(std::size_t n, std::string_view label);

  void expect_end() const;  // throws if bytes remain

  std::size_t position() const { return pos_; }
  std::size_t remaining() const { return data_.size() - pos_; }
  bool at_end() const { return pos_ == data_.size(); }
  const std::string& context() const { return context_; }
  void set_context(std::string context) { context_ = std::move(context); }

  // Throws Error("<context>: <what> at byte <offset of the current position><detail>"),
  // e.g. fail("record truncated", " (need 8, have 3)").
  [[noreturn]] void fail(std::string_view what, std::string_view detail = {}) const;

 private:
  const std::byte* take(std::size_t n);  // bounds-checked advance

  std::span<const std::byte> data_;
  std::string context_;
  std::uint64_t base_offset_ = 0;
  std::size_t pos_ = 0;
};

}  // namespace tilevit::package
