#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "package/byte_io.hpp"
#include "support/error.hpp"

using namespace tilevit;
using namespace tilevit::package;

namespace {

std::vector<std::byte> bytes_of(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

// Runs `f`, expects an Error, and returns its message.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no Error thrown";
  return {};
}

}  // namespace

TEST(ByteIo, RoundTripsEveryType) {
  ByteWriter w;
  w.write_u8(0xAB);
  w.write_u16(0xBEEF);
  w.write_u32(0xDEADBEEF);
  w.write_u64(0x0123456789ABCDEFull);
  w.write_i32(std::numeric_limits<std::int32_t>::min());
  w.write_i64(-1);
  w.write_f32(-0.0f);
  w.write_f32(std::bit_cast<float>(0x7FC01234u));  // a NaN with a payload
  w.write_f64(3.141592653589793);
  w.write_f64(std::numeric_limits<double>::infinity());
  w.write_string("héllo");
  w.write_string("");
  w.write_bytes(bytes_of({1, 2, 3}));

  ByteReader r(w.bytes(), "test");
  EXPECT_EQ(r.read_u8(), 0xAB);
  EXPECT_EQ(r.read_u16(), 0xBEEF);
  EXPECT_EQ(r.read_u32(), 0xDEADBEEFu);
  EXPECT_EQ(r.read_u64(), 0x0123456789ABCDEFull);
  EXPECT_EQ(r.read_i32(), std::numeric_limits<std::int32_t>::min());
  EXPECT_EQ(r.read_i64(), -1);
  const float negative_zero = r.read_f32();
  EXPECT_EQ(std::bit_cast<std::uint32_t>(negative_zero), 0x80000000u);
  EXPECT_EQ(std::bit_cast<std::uint32_t>(r.read_f32()), 0x7FC01234u);
  EXPECT_EQ(r.read_f64(), 3.141592653589793);
  EXPECT_EQ(r.read_f64(), std::numeric_limits<double>::infinity());
  EXPECT_EQ(r.read_string(100), "héllo");
  EXPECT_EQ(r.read_string(0), "");
  const auto raw = r.read_bytes(3);
  EXPECT_EQ(std::vector<std::byte>(raw.begin(), raw.end()), bytes_of({1, 2, 3}));
  EXPECT_TRUE(r.at_end());
  EXPECT_NO_THROW(r.expect_end());
}

TEST(ByteIo, LittleEndianLayout) {
  ByteWriter w;
  w.write_u32(0x01020304);
  w.write_u16(0x0506);
  w.write_i32(-2);
  w.write_string("ab");
  EXPECT_EQ(w.bytes(), bytes_of({4, 3, 2, 1, 6, 5, 0xFE, 0xFF, 0xFF, 0xFF, 2, 0, 0, 0, 'a', 'b'}));
}

TEST(ByteIo, AlignPadsWithZeros) {
  ByteWriter w;
  w.write_u8(7);
  w.align(8);
  EXPECT_EQ(w.size(), 8u);
  w.align(8);  // already aligned: nothing added
  EXPECT_EQ(w.size(), 8u);
  w.write_u8(1);
  w.align(64);
  EXPECT_EQ(w.size(), 64u);
  for (std::size_t i = 1; i < 64; ++i) {
    if (i != 8) {
      EXPECT_EQ(w.bytes()[i], std::byte{0}) << i;
    }
  }
  EXPECT_THROW(w.align(3), Error);
  EXPECT_THROW(w.align(0), Error);

  ByteReader r(w.bytes(), "test");
  r.read_u8();
  r.skip_padding(8);
  EXPECT_EQ(r.position(), 8u);
  r.read_u8();
  r.skip_padding(64);
  EXPECT_TRUE(r.at_end());
}

TEST(ByteIo, NonZeroPaddingIsAnError) {
  auto data = bytes_of({1, 0, 0, 9, 0, 0, 0, 0});
  ByteReader r(data, "pkg: section \"x\"", 128);
  r.read_u8();
  EXPECT_EQ(error_of([&] { r.skip_padding(8); }), "pkg: section \"x\": non-zero padding byte at byte 131");
}

TEST(ByteIo, PatchU32) {
  ByteWriter w;
  w.write_u32(0);
  w.write_u8(5);
  w.patch_u32(0, 42);
  ByteReader r(w.bytes(), "t");
  EXPECT_EQ(r.read_u32(), 42u);
  EXPECT_THROW(w.patch_u32(2, 1), Error);
  EXPECT_THROW(w.patch_u32(100, 1), Error);
}

TEST(ByteIo, WriteCountRefusesMoreThanU32) {
  ByteWriter w;
  EXPECT_THROW(w.write_count(std::size_t{1} << 32), Error);
  w.write_count(0xFFFFFFFFu);
  EXPECT_EQ(w.size(), 4u);
}

TEST(ByteIo, TruncatedReadNamesContextOffsetAndSizes) {
  auto data = bytes_of({1, 2, 3});
  ByteReader r(data, "model.tvpkg: section \"programs\" tile 12", 4096);
  EXPECT_EQ(error_of([&] { r.read_u64(); }),
            "model.tvpkg: section \"programs\" tile 12: record truncated at byte 4096 (need 8, have 3)");
  // A failed read consumes nothing.
  EXPECT_EQ(r.position(), 0u);
  EXPECT_EQ(r.read_u16(), 0x0201);
  EXPECT_THROW(r.read_u16(), Error);
  EXPECT_THROW(r.read_u32(), Error);
  EXPECT_THROW(r.read_f32(), Error);
  EXPECT_THROW(r.read_f64(), Error);
  EXPECT_THROW(r.read_i64(), Error);
  EXPECT_THROW(r.read_bytes(2), Error);
  EXPECT_THROW(r.skip(2), Error);
  EXPECT_EQ(r.read_u8(), 3);
  EXPECT_THROW(r.read_u8(), Error);
  EXPECT_THROW(r.read_bytes(std::numeric_limits<std::size_t>::max()), Error);  // no overflow
}

TEST(ByteIo, EmptyReader) {
  ByteReader r({}, "empty");
  EXPECT_TRUE(r.at_end());
  EXPECT_THROW(r.read_u8(), Error);
  EXPECT_NO_THROW(r.read_bytes(0));
  EXPECT_NO_THROW(r.expect_end());
}

TEST(ByteIo, ExpectEndReportsTrailingBytes) {
  auto data = bytes_of({1, 2, 3});
  ByteReader r(data, "ctx");
  r.read_u8();
  EXPECT_EQ(error_of([&] { r.expect_end(); }), "ctx: 2 unexpected trailing bytes at byte 1");
}

TEST(ByteIo, ReadCountEnforcesLimitAndRemainingBytes) {
  {
    ByteWriter w;
    w.write_u32(3);
    w.write_zeros(3 * 8);
    ByteReader r(w.bytes(), "t");
    EXPECT_EQ(r.read_count(3, 8), 3u);
    EXPECT_EQ(r.remaining(), 24u);
  }
  {
    ByteWriter w;
    w.write_u32(4);
    ByteReader r(w.bytes(), "t");
    EXPECT_EQ(error_of([&] { r.read_count(3, 1); }), "t: count 4 exceeds the limit of 3 at byte 0");
  }
  {
    ByteWriter w;
    w.write_u32(3);
    w.write_zeros(23);  // one byte short of 3 * 8
    ByteReader r(w.bytes(), "t", 100);
    EXPECT_EQ(error_of([&] { r.read_count(1000, 8); }),
              "t: count 3 of 8-byte elements at byte 100 runs past the end (23 bytes left after the count)");
  }
  {
    // The largest count with a large element size: must be refused without overflow.
    ByteWriter w;
    w.write_u32(0xFFFFFFFFu);
    w.write_zeros(16);
    ByteReader r(w.bytes(), "t");
    EXPECT_THROW(r.read_count(0xFFFFFFFFu, std::numeric_limits<std::size_t>::max()), Error);
    EXPECT_THROW(r.read_count(0xFFFFFFFFu, 1), Error);
    EXPECT_THROW(r.read_count(0xFFFFFFFFu, 0), Error);  // 0-byte elements are a caller bug
  }
  {
    ByteWriter w;
    w.write_u32(0);
    ByteReader r(w.bytes(), "t");
    EXPECT_EQ(r.read_count(0, 1000), 0u);
  }
  {
    const auto data = bytes_of({1, 0});  // not even the count fits
    ByteReader r(data, "t");
    EXPECT_THROW(r.read_count(10, 1), Error);
  }
}

TEST(ByteIo, StringsAreBounded) {
  {
    ByteWriter w;
    w.write_string("abcdef");
    ByteReader r(w.bytes(), "t");
    EXPECT_EQ(error_of([&] { r.read_string(5); }), "t: string length 6 exceeds the limit of 5 at byte 0");
    EXPECT_EQ(r.read_string(6), "abcdef");
  }
  {
    ByteWriter w;
    w.write_u32(10);
    w.write_bytes(bytes_of({'a', 'b', 'c'}));
    ByteReader r(w.bytes(), "t", 8);
    EXPECT_EQ(error_of([&] { r.read_string(100); }), "t: string truncated at byte 8 (length 10, have 3)");
  }
  {
    ByteWriter w;
    w.write_u32(0xFFFFFFFFu);
    ByteReader r(w.bytes(), "t");
    EXPECT_THROW(r.read_string(std::numeric_limits<std::size_t>::max()), Error);
  }
}

TEST(ByteIo, SubReaderExtendsContextAndKeepsFileOffsets) {
  ByteWriter w;
  w.write_u32(1);
  w.write_u16(7);
  w.write_u8(9);
  ByteReader r(w.bytes(), "pkg: section \"program\"", 1000);
  r.read_u32();
  ByteReader tile = r.sub(2, "tile 12");
  EXPECT_EQ(r.position(), 6u);
  EXPECT_EQ(tile.context(), "pkg: section \"program\" tile 12");
  EXPECT_EQ(tile.read_u16(), 7);
  EXPECT_EQ(error_of([&] { tile.read_u8(); }),
            "pkg: section \"program\" tile 12: record truncated at byte 1006 (need 1, have 0)");
  EXPECT_EQ(r.read_u8(), 9);
  EXPECT_THROW(r.sub(1, "x"), Error);
}
