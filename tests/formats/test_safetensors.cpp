// Safetensors reader/writer: round trip, exact F16/BF16 decoding, and one test per
// rejection of a malformed file (each crafted byte by byte).
#include "formats/safetensors.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "support/error.hpp"

namespace tilevit::formats {
namespace {

// A map-backed TensorSource: name -> (shape, values).
class MapSource : public model::TensorSource {
 public:
  void add(const std::string& name, std::vector<std::int64_t> shape, std::vector<float> values) {
    tensors_[name] = {std::move(shape), std::move(values)};
  }
  std::string describe() const override { return "map source"; }
  std::optional<model::TensorInfo> info(const std::string& name) const override {
    const auto it = tensors_.find(name);
    if (it == tensors_.end()) return std::nullopt;
    model::TensorInfo info;
    info.name = name;
    info.shape = it->second.first;
    return info;
  }
  void read_f32(const std::string& name, std::span<float> out) const override {
    const auto& values = tensors_.at(name).second;
    ASSERT_EQ(out.size(), values.size());
    std::copy(values.begin(), values.end(), out.begin());
  }

 private:
  std::map<std::string, std::pair<std::vector<std::int64_t>, std::vector<float>>> tensors_;
};

std::string temp_path(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "tilevit_safetensors_test";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_raw(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// 8-byte little-endian length + header + data.
std::string file_bytes(const std::string& header, const std::string& data) {
  std::string bytes(8, '\0');
  const std::uint64_t n = header.size();
  std::memcpy(bytes.data(), &n, 8);
  return bytes + header + data;
}

std::string u16_bytes(const std::vector<std::uint16_t>& values) {
  std::string s(values.size() * 2, '\0');
  std::memcpy(s.data(), values.data(), s.size());
  return s;
}

// Writes `bytes` to a fresh file named after the test and expects open() to fail with a
// message naming the path and containing `keyword`.
void expect_rejected(const std::string& bytes, const std::string& keyword) {
  const std::string path = temp_path(std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) +
                                     ".safetensors");
  write_raw(path, bytes);
  try {
    SafetensorsFile::open(path);
    ADD_FAILURE() << "open() accepted a malformed file; expected an error about: " << keyword;
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find(keyword), std::string::npos) << "missing '" << keyword << "' in: " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << "message is not one line: " << message;
  }
}

// One valid F32 tensor "t" of shape [2] whose entry is spliced into otherwise-good files.
std::string one_tensor(const std::string& entry, const std::string& data = std::string(8, '\0')) {
  return file_bytes("{\"t\":" + entry + "}", data);
}

MapSource sample_source() {
  MapSource source;
  source.add("b.weight", {2, 3}, {1.f, -2.f, 3.5f, 0.f, -0.f, 1e-30f});
  source.add("a.bias", {3}, {7.f, 8.f, 9.f});
  source.add("empty", {0, 4}, {});
  source.add("scalar", {}, {42.f});
  return source;
}

TEST(SafetensorsWrite, RoundTripValuesShapesMetadataNames) {
  const MapSource source = sample_source();
  const std::string path = temp_path("roundtrip.safetensors");
  const std::vector<std::string> order = {"b.weight", "a.bias", "empty", "scalar"};
  write_safetensors(path, source, order, {{"format", "pt"}, {"seed", "0"}});

  const auto file = SafetensorsFile::open(path);
  EXPECT_EQ(file->describe(), path);
  EXPECT_EQ(file->names(), (std::vector<std::string>{"a.bias", "b.weight", "empty", "scalar"}));
  EXPECT_EQ(file->metadata(), (std::map<std::string, std::string>{{"format", "pt"}, {"seed", "0"}}));
  for (const std::string& name : order) {
    const auto info = file->info(name);
    ASSERT_TRUE(info.has_value()) << name;
    EXPECT_EQ(info->name, name);
    EXPECT_EQ(info->dtype, model::DType::F32);
    EXPECT_EQ(info->shape, source.info(name)->shape);
    std::size_t n = 1;
    for (auto d : info->shape) n *= static_cast<std::size_t>(d);
    std::vector<float> got(n), want(n);
    file->read_f32(name, got);
    source.read_f32(name, want);
    for (std::size_t i = 0; i < n; ++i)
      EXPECT_EQ(std::bit_cast<std::uint32_t>(got[i]), std::bit_cast<std::uint32_t>(want[i])) << name << "[" << i << "]";
  }
  EXPECT_FALSE(file->info("missing").has_value());
  std::vector<float> wrong_size(5);
  EXPECT_THROW(file->read_f32("a.bias", wrong_size), Error);
  EXPECT_THROW(file->read_f32("missing", wrong_size), Error);
}

TEST(SafetensorsWrite, HeaderLayoutMatchesReferenceWriter) {
  MapSource source;
  source.add("x", {2}, {1.f, 2.f});
  source.add("a", {1}, {3.f});
  const std::string path = temp_path("layout.safetensors");
  write_safetensors(path, source, {"x", "a"}, {{"k", "v"}});
  const std::string bytes = read_bytes(path);
  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n % 8, 0u);
  const std::string header = bytes.substr(8, n);
  const std::string json =
      R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
      R"("a":{"dtype":"F32","shape":[1],"data_offsets":[8,12]},"__metadata__":{"k":"v"}})";
  EXPECT_EQ(header.substr(0, json.size()), json);
  EXPECT_EQ(header.substr(json.size()), std::string(n - json.size(), ' '));
  EXPECT_LT(n - json.size(), 8u);
  ASSERT_EQ(bytes.size(), 8 + n + 12);
  float data[3];
  std::memcpy(data, bytes.data() + 8 + n, 12);
  EXPECT_EQ(data[0], 1.f);
  EXPECT_EQ(data[1], 2.f);
  EXPECT_EQ(data[2], 3.f);
}

TEST(SafetensorsWrite, NoMetadataKeyWhenEmpty) {
  MapSource source;
  source.add("x", {1}, {1.f});
  const std::string path = temp_path("nometa.safetensors");
  write_safetensors(path, source, {"x"}, {});
  EXPECT_EQ(read_bytes(path).find("__metadata__"), std::string::npos);
  EXPECT_TRUE(SafetensorsFile::open(path)->metadata().empty());
}

TEST(SafetensorsWrite, RewriteIsByteIdentical) {
  const MapSource source = sample_source();
  const std::string first = temp_path("rewrite1.safetensors");
  const std::string second = temp_path("rewrite2.safetensors");
  const std::string third = temp_path("rewrite3.safetensors");
  const std::vector<std::string> order = {"scalar", "b.weight", "empty", "a.bias"};
  write_safetensors(first, source, order, {{"m", "1"}});
  write_safetensors(second, source, order, {{"m", "1"}});
  EXPECT_EQ(read_bytes(first), read_bytes(second));
  // Reading a written file back and writing it again changes nothing.
  const auto reopened = SafetensorsFile::open(first);
  write_safetensors(third, *reopened, order, reopened->metadata());
  EXPECT_EQ(read_bytes(first), read_bytes(third));
}

TEST(SafetensorsWrite, RejectsUnknownOrDuplicateNamesAndLeavesNoFile) {
  const MapSource source = sample_source();
  const std::string path = temp_path("bad_request.safetensors");
  std::filesystem::remove(path);
  EXPECT_THROW(write_safetensors(path, source, {"a.bias", "nope"}, {}), Error);
  EXPECT_THROW(write_safetensors(path, source, {"a.bias", "a.bias"}, {}), Error);
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(SafetensorsRead, F16DecodesExactly) {
  // 1.0, -2.0, 65504 (max), smallest subnormal 2^-24, largest subnormal, +inf, -inf, NaN,
  // -0.0, 0.333251953125 (0x3555).
  const std::vector<std::uint16_t> bits = {0x3c00, 0xc000, 0x7bff, 0x0001, 0x03ff, 0x7c00, 0xfc00, 0x7e00, 0x8000, 0x3555};
  const std::string path = temp_path("f16.safetensors");
  write_raw(path, file_bytes(R"({"h":{"dtype":"F16","shape":[10],"data_offsets":[0,20]}})", u16_bytes(bits)));
  const auto file = SafetensorsFile::open(path);
  EXPECT_EQ(file->info("h")->dtype, model::DType::F16);
  std::vector<float> v(10);
  file->read_f32("h", v);
  EXPECT_EQ(v[0], 1.0f);
  EXPECT_EQ(v[1], -2.0f);
  EXPECT_EQ(v[2], 65504.0f);
  EXPECT_EQ(v[3], std::ldexp(1.0f, -24));
  EXPECT_EQ(v[4], std::ldexp(1023.0f, -24));
  EXPECT_EQ(v[5], std::numeric_limits<float>::infinity());
  EXPECT_EQ(v[6], -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(v[7]));
  EXPECT_EQ(std::bit_cast<std::uint32_t>(v[8]), 0x80000000u);
  EXPECT_EQ(v[9], 0.333251953125f);
}

TEST(SafetensorsRead, BF16DecodesExactly) {
  // 1.0, -1.5, smallest subnormal 2^-133, +inf, NaN, 3.140625 (0x4049).
  const std::vector<std::uint16_t> bits = {0x3f80, 0xbfc0, 0x0001, 0x7f80, 0x7fc0, 0x4049};
  const std::string path = temp_path("bf16.safetensors");
  // An odd-sized header puts the data at an unaligned address: reads must still work.
  write_raw(path, file_bytes(R"({"b":{"dtype":"BF16","shape":[2,3],"data_offsets":[0,12]}} )", u16_bytes(bits)));
  const auto file = SafetensorsFile::open(path);
  EXPECT_EQ(file->info("b")->dtype, model::DType::BF16);
  EXPECT_EQ(file->info("b")->shape, (std::vector<std::int64_t>{2, 3}));
  std::vector<float> v(6);
  file->read_f32("b", v);
  EXPECT_EQ(v[0], 1.0f);
  EXPECT_EQ(v[1], -1.5f);
  EXPECT_EQ(v[2], std::ldexp(1.0f, -133));
  EXPECT_EQ(v[3], std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(v[4]));
  EXPECT_EQ(v[5], 3.140625f);
}

TEST(SafetensorsRead, OtherDtypesOpenButCannotBeReadAsFloat) {
  const std::string path = temp_path("i64.safetensors");
  write_raw(path, file_bytes(R"({"ids":{"dtype":"I64","shape":[2],"data_offsets":[0,16]},)"
                             R"("f":{"dtype":"F32","shape":[1],"data_offsets":[16,20]}})",
                             std::string(20, '\0')));
  const auto file = SafetensorsFile::open(path);
  EXPECT_EQ(file->names(), (std::vector<std::string>{"f", "ids"}));
  try {
    file->info("ids");
    ADD_FAILURE() << "info() of an I64 tensor did not throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'ids' has dtype I64; tilevit reads F32, F16 or BF16"), std::string::npos)
        << e.what();
  }
  std::vector<float> v(2);
  EXPECT_THROW(file->read_f32("ids", v), Error);
}

TEST(SafetensorsRead, ZeroSizedTensorsAndEmptyFileAreLegal) {
  const std::string path = temp_path("zero.safetensors");
  write_raw(path, file_bytes(R"({"z1":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},)"
                             R"("a":{"dtype":"F16","shape":[1],"data_offsets":[0,2]},)"
                             R"("z2":{"dtype":"F32","shape":[3,0,5],"data_offsets":[2,2]}})",
                             u16_bytes({0x3c00})));
  const auto file = SafetensorsFile::open(path);
  EXPECT_EQ(file->names().size(), 3u);
  std::vector<float> none;
  file->read_f32("z2", none);
  const std::string empty = temp_path("empty.safetensors");
  write_raw(empty, file_bytes("{}", ""));
  EXPECT_TRUE(SafetensorsFile::open(empty)->names().empty());
}

// ---- one test per rejection ----

TEST(SafetensorsReject, FileUnder8Bytes) { expect_rejected("\x02\0\0\0", "under the 8-byte"); }

TEST(SafetensorsReject, MissingFile) {
  try {
    SafetensorsFile::open(temp_path("does_not_exist.safetensors"));
    ADD_FAILURE() << "no error for a missing file";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does_not_exist.safetensors"), std::string::npos);
  }
}

TEST(SafetensorsReject, HeaderLengthOverLimit) {
  std::string bytes(8, '\0');
  const std::uint64_t n = 100'000'001;
  std::memcpy(bytes.data(), &n, 8);
  expect_rejected(bytes + "{}", "over the limit");
}

TEST(SafetensorsReject, HeaderPastEndOfFile) {
  std::string bytes = file_bytes("{}", "");
  bytes[0] = 40;  // claims 40 header bytes, has 2
  expect_rejected(bytes, "past the end of the file");
}

TEST(SafetensorsReject, HeaderNotUtf8) { expect_rejected(file_bytes("{\"\xff\":{}}", ""), "UTF-8"); }

TEST(SafetensorsReject, HeaderOverlongUtf8) { expect_rejected(file_bytes("{\"\xc0\xaf\":{}}", ""), "UTF-8"); }

TEST(SafetensorsReject, HeaderNotJson) { expect_rejected(file_bytes("{\"t\": nope}", ""), "not valid JSON"); }

TEST(SafetensorsReject, HeaderNotObject) { expect_rejected(file_bytes("[1, 2]  ", ""), "not a JSON object"); }

TEST(SafetensorsReject, EntryNotObject) { expect_rejected(one_tensor("[1]"), "entry is not a JSON object"); }

TEST(SafetensorsReject, MissingDtype) {
  expect_rejected(one_tensor(R"({"shape":[2],"data_offsets":[0,8]})"), "\"dtype\"");
}

TEST(SafetensorsReject, DtypeNotString) {
  expect_rejected(one_tensor(R"({"dtype":4,"shape":[2],"data_offsets":[0,8]})"), "\"dtype\"");
}

TEST(SafetensorsReject, UnknownDtype) {
  expect_rejected(one_tensor(R"({"dtype":"Q4_K","shape":[2],"data_offsets":[0,8]})"), "unknown dtype \"Q4_K\"");
}

TEST(SafetensorsReject, MissingShape) {
  expect_rejected(one_tensor(R"({"dtype":"F32","data_offsets":[0,8]})"), "\"shape\"");
}

TEST(SafetensorsReject, ShapeNotArray) {
  expect_rejected(one_tensor(R"({"dtype":"F32","shape":2,"data_offsets":[0,8]})"), "\"shape\"");
}

TEST(SafetensorsReject, ShapeDimNotInteger) {
  expect_rejected(one_tensor(R"({"dtype":"F32","shape":[2.0],"data_offsets":[0,8]})"), "not an integer");
}

TEST(SafetensorsReject, NegativeDim) {
  expect_rejected(one_tensor(R"({"dtype":"F32","shape":[-2],"data_offsets":[0,8]})"), "negative");
}

TEST(SafetensorsReject, DimOverInt64) {
  expect_rejected(one_tensor(R"({"dtype":"F32","shape":[9223372036854775808],"data_offsets":[0,8]})"),
                  "overflows int64");
}

TEST(SafetensorsReject, ShapeProductWrapsInt64) {
  // 2^62 * 4 = 2^64 wraps to 0 in unchecked 64-bit arithmetic.
  expect_rejected(one_tensor(R"({"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,8]})"),
                  "overflows int64");
}

TEST(SafetensorsReject, ShapeTwoTo32Squared) {
  expect_rejected(one_tensor(R"({"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]})"),
                  "overflows int64");
}

TEST(SafetensorsReject, OverflowBeforeZeroDim) {
  // The reference's running product fails before it reaches the 0.
  expect_rejected(one_tensor(R"({"dtype":"F32","shape":[4294967296,4294967296,0],"data_offsets":[0,0]})"),
                  "overflows int64");
}

TEST(SafetensorsReject, ShapeBytesBeyondFileSize) {
  // 2^40 F32 elements fit int64 but need 4 TiB; the file has 8 data bytes.
  expect_rejected(one_tensor(R"({"dtype":"F32","shape":[1099511627776],"data_offsets":[0,8]})"),
                  "needs more bytes than the file's data buffer");
}

TEST(SafetensorsReject, MissingDataOffsets) {
  expect_rejected(one_tensor(R"({"dtype":"F32","shape":[2]})"), "\"data_offsets\"");
}

TEST(SafetensorsReject, DataOffsetsWrongLength) {
  expect_rejected(one_tensor(R"({"dtype":"F32","shape":[2],"data_offsets":[0,8,8]})"), "\"data_offsets\"");
}

TEST(SafetensorsReject, DataOffsetsNegative) {
  expect_rejected(one_tensor(R"({"dtype":"F32","shape":[2],"data_offsets":[-8,0]})"), "non-negative integers");
}

TEST(SafetensorsReject, EndBeforeBegin) {
  expect_rejected(file_bytes(R"({"t":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})", std::string(8, '\0')),
                  "end before begin");
}

TEST(SafetensorsReject, OffsetsNotStartingAtZero) {
  expect_rejected(one_tensor(R"({"dtype":"F32","shape":[1],"data_offsets":[4,8]})"), "expected begin 0 (gap)");
}

TEST(SafetensorsReject, GapBetweenTensors) {
  expect_rejected(file_bytes(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                             R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
                             std::string(12, '\0')),
                  "expected begin 4 (gap)");
}

TEST(SafetensorsReject, OverlappingTensors) {
  expect_rejected(file_bytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                             R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                             std::string(12, '\0')),
                  "expected begin 8 (overlap)");
}

TEST(SafetensorsReject, TrailingDataAfterLastTensor) {
  expect_rejected(one_tensor(R"({"dtype":"F32","shape":[2],"data_offsets":[0,8]})", std::string(12, '\0')),
                  "data buffer holds 12 bytes");
}

TEST(SafetensorsReject, ByteSizeMismatch) {
  expect_rejected(one_tensor(R"({"dtype":"F16","shape":[2],"data_offsets":[0,8]})"), "byte size mismatch");
}

TEST(SafetensorsReject, DuplicateTensorName) {
  expect_rejected(file_bytes(R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                             R"("t":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                             std::string(8, '\0')),
                  "duplicate key 't'");
}

TEST(SafetensorsReject, MetadataValueNotString) {
  expect_rejected(file_bytes(R"({"__metadata__":{"n":3}})", ""), "\"__metadata__\" value of 'n' is not a string");
}

TEST(SafetensorsReject, MetadataNotObject) {
  expect_rejected(file_bytes(R"({"__metadata__":"x"})", ""), "\"__metadata__\" is not a JSON object");
}

TEST(SafetensorsReject, TruncatedInTheData) {
  MapSource source;
  source.add("a", {4}, {1.f, 2.f, 3.f, 4.f});
  source.add("b", {8}, std::vector<float>(8, 0.5f));
  const std::string good = temp_path("truncated_source.safetensors");
  write_safetensors(good, source, {"a", "b"}, {});
  const std::string bytes = read_bytes(good);
  // Cut in the middle of tensor b's data.
  expect_rejected(bytes.substr(0, bytes.size() - 10), "data buffer");
}

}  // namespace
}  // namespace tilevit::formats
