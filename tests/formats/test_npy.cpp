// .npy writer/reader: numpy-compatible bytes, round trip, '<f8' conversion, rejections.
#include "formats/npy.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/error.hpp"

namespace tilevit::formats {
namespace {

std::string temp_path(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "tilevit_npy_test";
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

// A version-`major` npy file with the given header dict (padded to 64) and raw data.
std::string npy_bytes(const std::string& dict, const std::string& data, int major = 1) {
  const std::size_t prefix = major == 1 ? 10 : 12;
  std::string header = dict;
  while ((prefix + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string bytes = std::string("\x93NUMPY", 6) + static_cast<char>(major) + '\0';
  const std::uint32_t n = static_cast<std::uint32_t>(header.size());
  bytes.append(reinterpret_cast<const char*>(&n), major == 1 ? 2 : 4);
  return bytes + header + data;
}

template <typename T>
std::string raw(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

void expect_rejected(const std::string& bytes, const std::string& keyword) {
  const std::string path =
      temp_path(std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + ".npy");
  write_raw(path, bytes);
  try {
    read_npy(path);
    ADD_FAILURE() << "read_npy accepted a malformed file; expected an error about: " << keyword;
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find(keyword), std::string::npos) << "missing '" << keyword << "' in: " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << "message is not one line: " << message;
  }
}

const std::string kGood2x3 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";

TEST(Npy, RoundTrip) {
  const std::string path = temp_path("roundtrip.npy");
  const std::vector<float> values = {1.f, -2.5f, 3.f, 1e-38f, 0.f, 65504.f};
  write_npy(path, {2, 3}, values);
  const NpyArray array = read_npy(path);
  EXPECT_EQ(array.shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(array.data, values);
}

TEST(Npy, RoundTripScalarEmptyAndOneDim) {
  const std::string scalar = temp_path("scalar.npy");
  write_npy(scalar, {}, std::vector<float>{7.f});
  EXPECT_EQ(read_npy(scalar).shape, std::vector<std::int64_t>{});
  EXPECT_EQ(read_npy(scalar).data, std::vector<float>{7.f});
  const std::string empty = temp_path("empty.npy");
  write_npy(empty, {0, 1152}, std::vector<float>{});
  EXPECT_EQ(read_npy(empty).shape, (std::vector<std::int64_t>{0, 1152}));
  EXPECT_TRUE(read_npy(empty).data.empty());
  const std::string one = temp_path("one.npy");
  write_npy(one, {3}, std::vector<float>{1.f, 2.f, 3.f});
  EXPECT_EQ(read_npy(one).shape, std::vector<std::int64_t>{3});
}

TEST(Npy, HeaderBytesAreWhatNumpyWrites) {
  const std::string path = temp_path("header.npy");
  write_npy(path, {2, 3}, std::vector<float>(6, 1.f));
  const std::string bytes = read_bytes(path);
  ASSERT_GE(bytes.size(), 10u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const std::size_t header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  EXPECT_EQ((10 + header_len) % 64, 0u);
  EXPECT_EQ(bytes.size(), 10 + header_len + 6 * 4);
  const std::string header = bytes.substr(10, header_len);
  EXPECT_EQ(header.substr(0, kGood2x3.size()), kGood2x3);
  EXPECT_EQ(header.back(), '\n');
  EXPECT_EQ(header.substr(kGood2x3.size(), header_len - kGood2x3.size() - 1),
            std::string(header_len - kGood2x3.size() - 1, ' '));
  // numpy 1.24's np.save(np.zeros((2, 3), np.float32)) header is 118 bytes (128 total).
  EXPECT_EQ(header_len, 118u);
}

TEST(Npy, RejectsShapeDataMismatchOnWrite) {
  const std::string path = temp_path("bad_write.npy");
  std::filesystem::remove(path);
  EXPECT_THROW(write_npy(path, {2, 3}, std::vector<float>(5)), Error);
  EXPECT_THROW(write_npy(path, {-1}, std::vector<float>(1)), Error);
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(Npy, ReadsF8AndConverts) {
  const std::string path = temp_path("f8.npy");
  const std::vector<double> values = {1.0, -0.1, 1e300, 3.0};
  write_raw(path, npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", raw(values)));
  const NpyArray array = read_npy(path);
  EXPECT_EQ(array.shape, std::vector<std::int64_t>{4});
  ASSERT_EQ(array.data.size(), 4u);
  EXPECT_EQ(array.data[0], 1.0f);
  EXPECT_EQ(array.data[1], static_cast<float>(-0.1));
  EXPECT_TRUE(std::isinf(array.data[2]));
  EXPECT_EQ(array.data[3], 3.0f);
}

TEST(Npy, ReadsVersions2And3AndOtherKeyOrder) {
  const std::vector<float> values = {1.f, 2.f};
  for (int major : {2, 3}) {
    const std::string path = temp_path("v" + std::to_string(major) + ".npy");
    write_raw(path, npy_bytes("{\"shape\": (2,), \"fortran_order\": False, \"descr\": \"<f4\"}", raw(values), major));
    const NpyArray array = read_npy(path);
    EXPECT_EQ(array.shape, std::vector<std::int64_t>{2});
    EXPECT_EQ(array.data, values);
  }
}

TEST(Npy, RejectsBadMagic) {
  std::string bytes = npy_bytes(kGood2x3, std::string(24, '\0'));
  bytes[1] = 'X';
  expect_rejected(bytes, "magic");
}

TEST(Npy, RejectsUnknownVersion) {
  std::string bytes = npy_bytes(kGood2x3, std::string(24, '\0'));
  bytes[6] = 4;
  expect_rejected(bytes, "version");
}

TEST(Npy, RejectsBigEndianDescr) {
  expect_rejected(npy_bytes("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", std::string(24, '\0')),
                  "\"descr\" '>f4' is big-endian");
}

TEST(Npy, RejectsOtherDescr) {
  expect_rejected(npy_bytes("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }", std::string(24, '\0')),
                  "\"descr\"");
}

TEST(Npy, RejectsFortranOrder) {
  expect_rejected(npy_bytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", std::string(24, '\0')),
                  "\"fortran_order\"");
}

TEST(Npy, RejectsShapeDataSizeMismatch) {
  expect_rejected(npy_bytes(kGood2x3, std::string(28, '\0')), "\"shape\"");
}

TEST(Npy, RejectsTruncatedData) {
  const std::string path = temp_path("full.npy");
  write_npy(path, {2, 3}, std::vector<float>(6, 1.f));
  const std::string bytes = read_bytes(path);
  expect_rejected(bytes.substr(0, bytes.size() - 3), "truncated");
}

TEST(Npy, RejectsTruncatedHeader) {
  const std::string bytes = npy_bytes(kGood2x3, "");
  expect_rejected(bytes.substr(0, 40), "truncated");
}

TEST(Npy, RejectsTinyFile) { expect_rejected("\x93NUM", "truncated"); }

TEST(Npy, RejectsNegativeDim) {
  expect_rejected(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3), }", ""), "negative");
}

TEST(Npy, RejectsShapeOverflow) {
  expect_rejected(
      npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", ""),
      "overflows int64");
}

TEST(Npy, RejectsHugeHeaderLength) {
  std::string bytes = std::string("\x93NUMPY\x02\x00", 8);
  const std::uint32_t n = (1u << 20) + 1;
  bytes.append(reinterpret_cast<const char*>(&n), 4);
  expect_rejected(bytes + "{}", "header length");
}

TEST(Npy, RejectsMissingAndUnknownKeys) {
  expect_rejected(npy_bytes("{'descr': '<f4', 'shape': (2, 3), }", std::string(24, '\0')), "\"fortran_order\"");
}

TEST(Npy, RejectsUnexpectedKey) {
  expect_rejected(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", std::string(4, '\0')),
                  "unexpected header key 'x'");
}

}  // namespace
}  // namespace tilevit::formats
