#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "package/container.hpp"
#include "support/error.hpp"

using namespace tilevit;
using namespace tilevit::package;

// ---- Allocation tracking: lets tests check that forged sizes are refused before anything
// is allocated from them. All non-aligned forms are replaced so new/delete stay paired.
namespace {
std::atomic<bool> g_tracking{false};
std::atomic<std::size_t> g_largest{0};

void note_allocation(std::size_t n) {
  if (!g_tracking.load(std::memory_order_relaxed)) return;
  std::size_t current = g_largest.load(std::memory_order_relaxed);
  while (n > current && !g_largest.compare_exchange_weak(current, n, std::memory_order_relaxed)) {
  }
}

void* allocate(std::size_t n) {
  note_allocation(n);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
}  // namespace

void* operator new(std::size_t n) { return allocate(n); }
void* operator new[](std::size_t n) { return allocate(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  note_allocation(n);
  return std::malloc(n == 0 ? 1 : n);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  note_allocation(n);
  return std::malloc(n == 0 ? 1 : n);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace {

namespace fs = std::filesystem;

std::vector<std::byte> text_bytes(std::string_view s) {
  const auto span = std::as_bytes(std::span(s.data(), s.size()));
  return {span.begin(), span.end()};
}

std::vector<std::byte> pattern(std::size_t n, int seed) {
  std::vector<std::byte> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::byte>((i * 31 + seed * 7 + 1) & 0xFF);
  return out;
}

ContainerWriter small_writer() {
  ContainerWriter w;
  w.add_section("machine", 1, text_bytes("tilevit-machine 1\n[machine]\nname = test16\n"));
  ByteWriter program;
  program.write_count(3);
  for (std::uint32_t tile = 0; tile < 3; ++tile) {
    program.write_u32(tile);
    program.write_string("kernel_" + std::to_string(tile));
    program.write_f32(0.5f * tile);
    program.write_u64(0x1000u + tile);
  }
  w.add_section("program", 3, std::move(program).bytes());
  w.add_section("empty", 1, {});
  w.add_section("weights", 1, pattern(70, 1));
  return w;
}

std::vector<std::byte> small_package() { return small_writer().bytes(); }

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

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::uint32_t get_u32(const std::vector<std::byte>& b, std::size_t at) {
  std::uint32_t v;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}
std::uint64_t get_u64(const std::vector<std::byte>& b, std::size_t at) {
  std::uint64_t v;
  std::memcpy(&v, b.data() + at, 8);
  return v;
}
void put_u32(std::vector<std::byte>& b, std::size_t at, std::uint32_t v) { std::memcpy(b.data() + at, &v, 4); }
void put_u64(std::vector<std::byte>& b, std::size_t at, std::uint64_t v) { std::memcpy(b.data() + at, &v, 8); }

// Table entry fields (see docs/PACKAGE_FORMAT.md).
std::size_t entry(std::size_t i) { return kFixedHeaderBytes + kTableEntryBytes * i; }
std::size_t name_at(std::size_t i) { return entry(i); }
std::size_t version_at(std::size_t i) { return entry(i) + 32; }
std::size_t offset_at(std::size_t i) { return entry(i) + 36; }
std::size_t size_at(std::size_t i) { return entry(i) + 44; }
std::size_t sha_at(std::size_t i) { return entry(i) + 52; }

// Recomputes the header SHA-256 so a forged table gets past the header check.
void reseal(std::vector<std::byte>& b) {
  const std::size_t table_end = entry(get_u32(b, 16));
  if (table_end + 32 > b.size()) return;  // a forged count: nothing to reseal
  const Digest d = sha256(std::span<const std::byte>(b).first(table_end));
  std::memcpy(b.data() + table_end, d.data(), d.size());
}

// from_bytes on forged input: the Error message, and the largest single allocation made
// while validating.
std::pair<std::string, std::size_t> open_forged(const std::vector<std::byte>& bytes) {
  std::vector<std::byte> copy = bytes;
  g_largest = 0;
  g_tracking = true;
  std::string message = error_of([&] { Container::from_bytes(std::move(copy), "forged.tvpkg"); });
  g_tracking = false;
  return {message, g_largest.load()};
}

}  // namespace

TEST(Container, RoundTrip) {
  const ContainerWriter w = small_writer();
  const Container c = Container::from_bytes(w.bytes(), "mem.tvpkg");
  EXPECT_EQ(c.name(), "mem.tvpkg");
  EXPECT_EQ(c.flags(), 0u);
  ASSERT_EQ(c.sections().size(), 4u);
  EXPECT_EQ(c.sections()[0].name, "machine");
  EXPECT_EQ(c.sections()[1].name, "program");
  EXPECT_EQ(c.sections()[2].name, "empty");
  EXPECT_EQ(c.sections()[3].name, "weights");
  for (const Section& s : c.sections()) EXPECT_EQ(s.offset % 64, 0u) << s.name;

  const auto machine = c.payload(c.require("machine", 1));
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(machine.data()), machine.size()),
            "tilevit-machine 1\n[machine]\nname = test16\n");
  EXPECT_TRUE(c.payload(c.require("empty", 1)).empty());
  const auto weights = c.payload(c.require("weights", 1));
  EXPECT_EQ(std::vector<std::byte>(weights.begin(), weights.end()), pattern(70, 1));

  ByteReader r = c.reader(c.require("program", 3));
  ASSERT_EQ(r.read_count(100, 4 + 4 + 4 + 8), 3u);
  for (std::uint32_t tile = 0; tile < 3; ++tile) {
    EXPECT_EQ(r.read_u32(), tile);
    EXPECT_EQ(r.read_string(64), "kernel_" + std::to_string(tile));
    EXPECT_EQ(r.read_f32(), 0.5f * tile);
    EXPECT_EQ(r.read_u64(), 0x1000u + tile);
  }
  r.expect_end();
  EXPECT_EQ(c.find("nope"), nullptr);
  EXPECT_EQ(c.sha256_hex(), sha256_hex(w.bytes()));
}

TEST(Container, LayoutIsAsDocumented) {
  const auto b = small_package();
  EXPECT_EQ(std::memcmp(b.data(), "TVPKG\0\r\n", 8), 0);
  EXPECT_EQ(get_u32(b, 8), 1u);   // format version
  EXPECT_EQ(get_u32(b, 12), 0u);  // flags
  EXPECT_EQ(get_u32(b, 16), 4u);  // section count
  EXPECT_EQ(std::memcmp(b.data() + name_at(1), "program\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 32), 0);
  EXPECT_EQ(get_u32(b, version_at(1)), 3u);
  const std::size_t header_end = entry(4) + 32;
  const Digest header_sha = sha256(std::span<const std::byte>(b).first(entry(4)));
  EXPECT_EQ(std::memcmp(b.data() + entry(4), header_sha.data(), 32), 0);
  // Payloads follow at the next 64-byte boundaries; the file ends at the last payload.
  EXPECT_EQ(get_u64(b, offset_at(0)), (header_end + 63) / 64 * 64);
  std::uint64_t end = header_end;
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(get_u64(b, offset_at(i)), (end + 63) / 64 * 64) << i;
    const Digest s = sha256(std::span<const std::byte>(b).subspan(get_u64(b, offset_at(i)), get_u64(b, size_at(i))));
    EXPECT_EQ(std::memcmp(b.data() + sha_at(i), s.data(), 32), 0) << i;
    end = get_u64(b, offset_at(i)) + get_u64(b, size_at(i));
  }
  EXPECT_EQ(b.size(), end);
  EXPECT_EQ(get_u64(b, size_at(3)), 70u);
}

TEST(Container, EmptyPackage) {
  const ContainerWriter w;
  const auto b = w.bytes();
  EXPECT_EQ(b.size(), kMinPackageBytes);
  const Container c = Container::from_bytes(b, "empty.tvpkg");
  EXPECT_TRUE(c.sections().empty());
  auto longer = b;
  longer.push_back(std::byte{0});
  EXPECT_TRUE(contains(error_of([&] { Container::from_bytes(longer, "x"); }), "trailing data after the header"));
}

TEST(Container, OutputIsAPureFunctionOfTheInput) {
  EXPECT_EQ(small_package(), small_package());
  const std::string dir = ::testing::TempDir();
  small_writer().write(dir + "/pure_a.tvpkg");
  small_writer().write(dir + "/pure_b.tvpkg");
  const Container a = Container::open(dir + "/pure_a.tvpkg");
  const Container b = Container::open(dir + "/pure_b.tvpkg");
  EXPECT_EQ(a.sha256_hex(), b.sha256_hex());
  const auto expected = small_package();
  ASSERT_EQ(a.bytes().size(), expected.size());
  EXPECT_TRUE(std::equal(a.bytes().begin(), a.bytes().end(), expected.begin()));
}

TEST(Container, DifferentInputGivesDifferentSha) {
  std::set<std::string> hashes;
  auto add = [&](const ContainerWriter& w) { hashes.insert(Container::from_bytes(w.bytes(), "x").sha256_hex()); };
  add(small_writer());
  {
    ContainerWriter w;  // one payload byte differs
    auto p = pattern(70, 1);
    p[69] ^= std::byte{1};
    w.add_section("weights", 1, p);
    add(w);
    ContainerWriter w2;
    w2.add_section("weights", 1, pattern(70, 1));
    add(w2);
    ContainerWriter w3;  // version differs
    w3.add_section("weights", 2, pattern(70, 1));
    add(w3);
    ContainerWriter w4;  // name differs
    w4.add_section("weight", 1, pattern(70, 1));
    add(w4);
    ContainerWriter w5;  // order differs
    w5.add_section("a", 1, pattern(3, 1));
    w5.add_section("b", 1, pattern(3, 2));
    add(w5);
    ContainerWriter w6;
    w6.add_section("b", 1, pattern(3, 2));
    w6.add_section("a", 1, pattern(3, 1));
    add(w6);
    w6.add_section("c", 1, {});  // an extra empty section
    add(w6);
  }
  EXPECT_EQ(hashes.size(), 8u);
}

TEST(Container, WriterRejectsBadNamesAndDuplicates) {
  ContainerWriter w;
  for (const std::string& bad : std::vector<std::string>{"", "Machine", "a b", "x/y", std::string(33, 'a'), std::string("a\0b", 3)})
    EXPECT_THROW(w.add_section(bad, 1, {}), Error) << bad;
  EXPECT_NO_THROW(w.add_section(std::string(32, 'z'), 1, {}));
  EXPECT_NO_THROW(w.add_section("a.b-c_9", 1, {}));
  w.add_section("program", 1, {});
  EXPECT_TRUE(contains(error_of([&] { w.add_section("program", 2, pattern(3, 0)); }), "duplicate section \"program\""));
  EXPECT_EQ(w.section_count(), 3u);
  const Container c = Container::from_bytes(w.bytes(), "x");
  EXPECT_NE(c.find(std::string(32, 'z')), nullptr);
}

TEST(Container, WriterRefusesTooManySections) {
  ContainerWriter w;
  for (std::uint32_t i = 0; i < kMaxSections; ++i) w.add_section("s" + std::to_string(i), 1, {});
  EXPECT_THROW(w.add_section("one_more", 1, {}), Error);
  const Container c = Container::from_bytes(w.bytes(), "many.tvpkg");  // the limit itself is fine
  EXPECT_EQ(c.sections().size(), kMaxSections);
  EXPECT_NE(c.find("s4095"), nullptr);
}

TEST(Container, RequireMissingOrWrongVersion) {
  const Container c = Container::from_bytes(small_package(), "model.tvpkg");
  EXPECT_EQ(error_of([&] { c.require("bindings", 1); }), "model.tvpkg: missing required section \"bindings\"");
  EXPECT_EQ(error_of([&] { c.require("program", 1); }),
            "model.tvpkg: section \"program\" has version 3, this build reads version 1");
}

TEST(Container, SectionReaderErrorsNameFileSectionAndOffset) {
  ContainerWriter w;
  w.add_section("program", 1, pattern(3, 0));
  const Container c = Container::from_bytes(w.bytes(), "model.tvpkg");
  const Section& s = c.require("program", 1);
  ByteReader r = c.reader(s);
  EXPECT_EQ(error_of([&] { r.read_u64(); }), "model.tvpkg: section \"program\": record truncated at byte " +
                                                 std::to_string(s.offset) + " (need 8, have 3)");
  Section copy = s;  // a copy of a real entry is fine
  EXPECT_EQ(c.payload(copy).size(), 3u);
  Section foreign = s;  // one that does not describe this package is refused
  foreign.size = 1u << 30;
  EXPECT_THROW(c.payload(foreign), Error);
  foreign = s;
  foreign.name = "other";
  EXPECT_THROW(c.payload(foreign), Error);
}

TEST(Container, TruncationAtEveryCutPointIsAnError) {
  const auto full = small_package();
  std::vector<std::size_t> cuts;
  for (std::size_t cut = 0; cut < full.size(); cut += 7) cuts.push_back(cut);
  cuts.push_back(full.size() - 1);
  for (std::size_t cut : cuts) {
    std::vector<std::byte> part(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(cut));
    const std::string message = error_of([&] { Container::from_bytes(std::move(part), "cut.tvpkg"); });
    EXPECT_TRUE(contains(message, "cut.tvpkg: ")) << cut << ": " << message;
  }
}

TEST(Container, FlippingAnyByteIsAnError) {
  const auto good = small_package();
  const Container c = Container::from_bytes(good, "x");
  const std::size_t header_end = entry(4) + 32;
  auto expected_kind = [&](std::size_t at) -> std::vector<std::string> {
    if (at < 8) return {"bad magic"};
    if (at < 12) return {"unsupported package format version"};
    if (at < header_end) return {"header corrupted (SHA-256 mismatch)", "section count", "section table"};
    for (const Section& s : c.sections())
      if (at >= s.offset && at < s.offset + s.size) return {"section \"" + s.name + "\" corrupted (SHA-256 mismatch)"};
    return {"non-zero padding byte at " + std::to_string(at)};
  };
  for (std::uint8_t mask : {0x01, 0x80, 0xFF}) {
    for (std::size_t at = 0; at < good.size(); ++at) {
      auto bad = good;
      bad[at] ^= std::byte{mask};
      const std::string message = error_of([&] { Container::from_bytes(std::move(bad), "flip.tvpkg"); });
      bool matched = false;
      for (const std::string& kind : expected_kind(at)) matched = matched || contains(message, kind);
      EXPECT_TRUE(matched) << "byte " << at << " mask " << int(mask) << ": " << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
  }
}

TEST(Container, BadMagicAndUnsupportedVersion) {
  auto b = small_package();
  b[0] = std::byte{'X'};
  EXPECT_EQ(error_of([&] { Container::from_bytes(b, "a.tvpkg"); }), "a.tvpkg: not a tilevit package (bad magic)");
  b = small_package();
  put_u32(b, 8, 2);
  reseal(b);
  EXPECT_EQ(error_of([&] { Container::from_bytes(b, "a.tvpkg"); }),
            "a.tvpkg: unsupported package format version 2 (this build reads version 1 only)");
  const std::vector<std::byte> text = text_bytes("hello");
  EXPECT_TRUE(contains(error_of([&] { Container::from_bytes(text, "a.tvpkg"); }), "smaller than the 52-byte"));
}

TEST(Container, AllocationTrackerSeesAllocations) {  // guards the check below
  g_largest = 0;
  g_tracking = true;
  auto big = std::make_unique<std::vector<std::byte>>(200'000);
  g_tracking = false;
  EXPECT_GE(g_largest.load(), 200'000u);
}

TEST(Container, ForgedTablesAreRefusedBeforeAllocating) {
  const auto good = small_package();
  constexpr std::size_t kSmall = 64 * 1024;  // far below any forged size
  struct Case {
    const char* what;
    std::function<void(std::vector<std::byte>&)> forge;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {"count over limit", [](auto& b) { put_u32(b, 16, 0xFFFFFFFFu); }, "section count 4294967295 exceeds the limit of 4096"},
      {"count at limit, table past EOF", [](auto& b) { put_u32(b, 16, 4096); }, "runs past the end of the file"},
      {"offset + size overflows",
       [](auto& b) {
         put_u64(b, offset_at(0), 0xFFFFFFFFFFFFFFC0ull);
         put_u64(b, size_at(0), 0x100);
       },
       "overflows"},
      {"huge size", [](auto& b) { put_u64(b, size_at(3), std::uint64_t{1} << 62); }, "run past the end of the file"},
      {"max size", [](auto& b) { put_u64(b, size_at(0), ~std::uint64_t{0}); }, "overflows"},
      {"huge offset", [](auto& b) { put_u64(b, offset_at(3), std::uint64_t{1} << 60); }, "leaves a gap"},
      {"misaligned", [](auto& b) { put_u64(b, offset_at(1), get_u64(b, offset_at(1)) + 8); }, "not 64-byte aligned"},
      {"out of order", [](auto& b) { put_u64(b, offset_at(1), get_u64(b, offset_at(0)) - 64); }, "out of order"},
      {"overlap", [](auto& b) { put_u64(b, offset_at(1), get_u64(b, offset_at(0))); }, "overlaps section \"machine\""},
      {"overlaps header", [](auto& b) { put_u64(b, offset_at(0), 64); }, "overlaps the header"},
      {"gap", [](auto& b) { put_u64(b, offset_at(1), get_u64(b, offset_at(1)) + 64); }, "leaves a gap"},
      {"uppercase name", [](auto& b) { b[name_at(1)] = std::byte{'P'}; }, "section 1: invalid name \"Program\""},
      {"empty name", [](auto& b) { std::memset(b.data() + name_at(2), 0, 32); }, "section 2: invalid name \"\""},
      {"junk after NUL", [](auto& b) { b[name_at(2) + 20] = std::byte{'x'}; }, "invalid name \"empty\\x00"},
      {"control char", [](auto& b) { b[name_at(0)] = std::byte{'\n'}; }, "invalid name \"\\x0aachine\""},
      {"duplicate", [](auto& b) { std::memcpy(b.data() + name_at(3), b.data() + name_at(1), 32); },
       "duplicate section \"program\""},
      {"flags", [](auto& b) { put_u32(b, 12, 1); }, "unsupported flags 0x00000001 (version 1 defines none)"},
      {"section sha", [](auto& b) { b[sha_at(3)] ^= std::byte{1}; }, "section \"weights\" corrupted (SHA-256 mismatch)"},
      {"section shorter", [](auto& b) { put_u64(b, size_at(3), 69); }, "1 bytes of trailing data after the last section"},
      {"trailing garbage", [](auto& b) { b.resize(b.size() + 64); }, "64 bytes of trailing data after the last section"},
  };
  for (const Case& c : cases) {
    auto b = good;
    c.forge(b);
    reseal(b);
    const auto [message, largest] = open_forged(b);
    EXPECT_TRUE(contains(message, "forged.tvpkg: ")) << c.what << ": " << message;
    EXPECT_TRUE(contains(message, c.expect)) << c.what << ": " << message;
    EXPECT_LT(largest, kSmall) << c.what;
  }
}

TEST(Container, OpenChecksTheFileItself) {
  const std::string dir = ::testing::TempDir();
  EXPECT_TRUE(contains(error_of([&] { Container::open(dir + "/does-not-exist.tvpkg"); }),
                       "does-not-exist.tvpkg: cannot open"));
  EXPECT_TRUE(contains(error_of([&] { Container::open(dir); }), "not a regular file"));
  const std::string empty = dir + "/empty.tvpkg";
  { std::ofstream(empty, std::ios::binary); }
  EXPECT_TRUE(contains(error_of([&] { Container::open(empty); }), "empty.tvpkg: file is 0 bytes, smaller than"));

  const std::string path = dir + "/small.tvpkg";
  small_writer().write(path);
  const auto size = fs::file_size(path);
  EXPECT_EQ(error_of([&] { Container::open(path, size - 1); }),
            path + ": file is " + std::to_string(size) + " bytes, more than the limit of " + std::to_string(size - 1));
  const Container c = Container::open(path, size);
  EXPECT_EQ(c.name(), path);
  EXPECT_EQ(c.sections().size(), 4u);

  // Corruption on disk is reported with the path.
  auto bytes = small_package();
  bytes.back() ^= std::byte{0x10};
  const std::string corrupt = dir + "/corrupt.tvpkg";
  {
    std::ofstream out(corrupt, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  EXPECT_EQ(error_of([&] { Container::open(corrupt); }),
            corrupt + ": section \"weights\" corrupted (SHA-256 mismatch)");
}

TEST(Container, CopiesShareTheMapping) {
  const std::string path = ::testing::TempDir() + "/shared.tvpkg";
  small_writer().write(path);
  std::optional<Container> copy;
  {
    const Container c = Container::open(path);
    copy = c;
  }
  const auto w = copy->payload(copy->require("weights", 1));
  EXPECT_EQ(std::vector<std::byte>(w.begin(), w.end()), pattern(70, 1));
}
