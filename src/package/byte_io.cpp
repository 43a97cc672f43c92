#include "package/byte_io.hpp"

#include <bit>
#include <cstring>
#include <limits>

#include "support/error.hpp"

// Values are stored little-endian by memcpy; tilevit only targets x86-64.
static_assert(std::endian::native == std::endian::little, "package byte I/O assumes a little-endian host");

namespace tilevit::package {
namespace {

template <typename T>
void append(std::vector<std::byte>& out, T value) {
  const std::size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &value, sizeof(T));
}

template <typename T>
T load(const std::byte* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

bool is_power_of_two(std::size_t n) { return n != 0 && (n & (n - 1)) == 0; }

}  // namespace

// ---- ByteWriter ----

void ByteWriter::write_u8(std::uint8_t v) { append(bytes_, v); }
void ByteWriter::write_u16(std::uint16_t v) { append(bytes_, v); }
void ByteWriter::write_u32(std::uint32_t v) { append(bytes_, v); }
void ByteWriter::write_u64(std::uint64_t v) { append(bytes_, v); }
void ByteWriter::write_i32(std::int32_t v) { append(bytes_, v); }
void ByteWriter::write_i64(std::int64_t v) { append(bytes_, v); }
void ByteWriter::write_f32(float v) { append(bytes_, std::bit_cast<std::uint32_t>(v)); }
void ByteWriter::write_f64(double v) { append(bytes_, std::bit_cast<std::uint64_t>(v)); }

void ByteWriter::write_count(std::size_t count) {
  if (count > std::numeric_limits<std::uint32_t>::max())
    throw Error("package record: count " + std::to_string(count) + " does not fit in u32", kExitInternal);
  write_u32(static_cast<std::uint32_t>(count));
}

void ByteWriter::write_string(std::string_view text) {
  write_count(text.size());
  write_bytes(std::as_bytes(std::span(text.data(), text.size())));
}

void ByteWriter::write_bytes(std::span<const std::byte> bytes) {
  bytes_.insert(bytes_.end(), bytes.begin(), bytes.end());
}

void ByteWriter::write_zeros(std::size_t n) { bytes_.resize(bytes_.size() + n, std::byte{0}); }

void ByteWriter::align(std::size_t alignment) {
  if (!is_power_of_two(alignment))
    throw Error("package record: alignment " + std::to_string(alignment) + " is not a power of two", kExitInternal);
  write_zeros((alignment - bytes_.size() % alignment) % alignment);
}

void ByteWriter::patch_u32(std::size_t at, std::uint32_t v) {
  if (at > bytes_.size() || bytes_.size() - at < sizeof v)
    throw Error("package record: patch at byte " + std::to_string(at) + " is past the end", kExitInternal);
  std::memcpy(bytes_.data() + at, &v, sizeof v);
}

// ---- ByteReader ----

ByteReader::ByteReader(std::span<const std::byte> data, std::string context, std::uint64_t base_offset)
    : data_(data), context_(std::move(context)), base_offset_(base_offset) {}

void ByteReader::fail(std::string_view what, std::string_view detail) const {
  throw Error(context_ + ": " + std::string(what) + " at byte " + std::to_string(base_offset_ + pos_) +
              std::string(detail));
}

const std::byte* ByteReader::take(std::size_t n) {
  if (n > remaining())
    fail("record truncated", " (need " + std::to_string(n) + ", have " + std::to_string(remaining()) + ")");
  const std::byte* p = data_.data() + pos_;
  pos_ += n;
  return p;
}

std::uint8_t ByteReader::read_u8() { return load<std::uint8_t>(take(1)); }
std::uint16_t ByteReader::read_u16() { return load<std::uint16_t>(take(2)); }
std::uint32_t ByteReader::read_u32() { return load<std::uint32_t>(take(4)); }
std::uint64_t ByteReader::read_u64() { return load<std::uint64_t>(take(8)); }
std::int32_t ByteReader::read_i32() { return load<std::int32_t>(take(4)); }
std::int64_t ByteReader::read_i64() { return load<std::int64_t>(take(8)); }
float ByteReader::read_f32() { return std::bit_cast<float>(read_u32()); }
double ByteReader::read_f64() { return std::bit_cast<double>(read_u64()); }

std::uint32_t ByteReader::read_count(std::uint32_t max_count, std::size_t element_bytes) {
  if (element_bytes == 0) throw Error(context_ + ": read_count with 0-byte elements", kExitInternal);
  const std::size_t at = pos_;
  const std::uint32_t count = read_u32();
  if (count > max_count) {
    pos_ = at;  // report the position of the count itself
    fail("count " + std::to_string(count) + " exceeds the limit of " + std::to_string(max_count));
  }
  // Division instead of multiplication: count * element_bytes cannot overflow this way.
  if (count > remaining() / element_bytes) {
    const std::size_t left = remaining();
    pos_ = at;
    fail("count " + std::to_string(count) + " of " + std::to_string(element_bytes) + "-byte elements",
         " runs past the end (" + std::to_string(left) + " bytes left after the count)");
  }
  return count;
}

std::string ByteReader::read_string(std::size_t max_bytes) {
  const std::size_t at = pos_;
  const std::uint32_t length = read_u32();
  if (length > max_bytes) {
    pos_ = at;
    fail("string length " + std::to_string(length) + " exceeds the limit of " + std::to_string(max_bytes));
  }
  if (length > remaining()) {
    const std::size_t left = remaining();
    pos_ = at;
    fail("string truncated", " (length " + std::to_string(length) + ", have " + std::to_string(left) + ")");
  }
  const std::byte* p = take(length);
  return std::string(reinterpret_cast<const char*>(p), length);
}

std::span<const std::byte> ByteReader::read_bytes(std::size_t n) { return {take(n), n}; }

void ByteReader::skip(std::size_t n) { take(n); }

void ByteReader::skip_padding(std::size_t alignment) {
  if (!is_power_of_two(alignment))
    throw Error(context_ + ": alignment " + std::to_string(alignment) + " is not a power of two", kExitInternal);
  const std::size_t n = (alignment - pos_ % alignment) % alignment;
  const std::size_t at = pos_;
  const std::byte* p = take(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (p[i] != std::byte{0}) {
      pos_ = at + i;
      fail("non-zero padding byte");
    }
  }
}

ByteReader ByteReader::sub(std::size_t n, std::string_view label) {
  const std::uint64_t base = base_offset_ + pos_;
  const std::byte* p = take(n);
  return ByteReader({p, n}, context_ + " " + std::string(label), base);
}

void ByteReader::expect_end() const {
  if (!at_end()) fail(std::to_string(remaining()) + " unexpected trailing bytes");
}

}  // namespace tilevit::package
