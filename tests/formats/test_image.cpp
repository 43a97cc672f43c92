// Image decoding, Pillow-exact bicubic resize and SigLIP preprocessing against fixtures
// that tools/make_image_fixtures.py generated with Debian's Pillow 9.4 (see
// tests/fixtures/images/SOURCES.md for the two photographs).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "formats/image.hpp"
#include "formats/npy.hpp"
#include "support/error.hpp"

namespace fs = std::filesystem;
using tilevit::Error;
using namespace tilevit::formats;

namespace {

const std::string kImages = std::string(TILEVIT_FIXTURES) + "/images/";

std::vector<std::uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot open " << path;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const void* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  ASSERT_TRUE(out.good()) << path;
}

std::uint64_t fnv1a64(const std::vector<std::uint8_t>& data) {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (std::uint8_t b : data) h = (h ^ b) * 0x100000001B3ull;
  return h;
}

int max_abs_diff(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b) {
  int m = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) m = std::max(m, std::abs(int(a[i]) - int(b[i])));
  return m;
}

// A per-test scratch directory, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* info = testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("tilevit_test_image_" + std::to_string(::getpid()) + "_" + info->name());
    fs::create_directories(dir_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

 private:
  fs::path dir_;
};

// Calls fn, expects an Error whose one-line message names `path` and contains `needle`,
// and checks that the C libraries printed nothing on their own.
template <typename Fn>
void expect_error(Fn fn, const std::string& path, const std::string& needle) {
  testing::internal::CaptureStderr();
  std::string message;
  try {
    fn();
    ADD_FAILURE() << "no Error thrown for " << path;
  } catch (const Error& e) {
    message = e.what();
  }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "") << "a library printed to stderr";
  EXPECT_NE(message.find(path), std::string::npos) << "message does not name the path: " << message;
  EXPECT_NE(message.find(needle), std::string::npos) << "message lacks '" << needle << "': " << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << "message is not one line: " << message;
}

// A little .npy (format 1.0, '<f4', C order), written by hand so the test does not
// depend on write_npy.
void write_npy_bytes(const std::string& path, const std::string& shape, const std::vector<float>& values) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(header.size() & 0xFF);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header;
  bytes.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  write_bytes(path, bytes.data(), bytes.size());
}

RgbImage solid(int w, int h, std::uint8_t r, std::uint8_t g, std::uint8_t b) {
  RgbImage im{w, h, {}};
  for (int i = 0; i < w * h; ++i) im.pixels.insert(im.pixels.end(), {r, g, b});
  return im;
}

// ------------------------------------------------------------------ the two photographs

struct Photo {
  const char* file;
  const char* stem;
};
void PrintTo(const Photo& p, std::ostream* os) { *os << p.file; }
class PhotoTest : public testing::TestWithParam<Photo> {};

TEST_P(PhotoTest, DecodeMatchesPillowExactly) {
  const Photo p = GetParam();
  const RgbImage im = decode_image(kImages + p.file);
  std::ifstream info(kImages + p.stem + ".decode.txt");
  int w = 0, h = 0;
  std::string hash;
  ASSERT_TRUE(info >> w >> h >> hash);
  EXPECT_EQ(im.width, w);
  EXPECT_EQ(im.height, h);
  ASSERT_EQ(im.pixels.size(), std::size_t(w) * h * 3);
  // Tolerance 0: libjpeg-turbo here and in Pillow are the same library, PNG is lossless.
  char mine[17];
  std::snprintf(mine, sizeof mine, "%016llx", static_cast<unsigned long long>(fnv1a64(im.pixels)));
  EXPECT_EQ(mine, hash) << "decoded pixels differ from Pillow's decode";
}

TEST_P(PhotoTest, ResizeMatchesPillowBicubic) {
  const Photo p = GetParam();
  const RgbImage resized = resize_bicubic_pillow(decode_image(kImages + p.file), 384, 384);
  const RgbImage pillow = decode_image(kImages + p.stem + ".pillow384.png");
  ASSERT_EQ(pillow.width, 384);
  ASSERT_EQ(pillow.height, 384);
  ASSERT_EQ(resized.pixels.size(), pillow.pixels.size());
  const int diff = max_abs_diff(resized.pixels, pillow.pixels);
  RecordProperty("max_abs_diff", diff);
  std::printf("[ image    ] %s: max abs difference vs Pillow resize = %d (of 255)\n", p.file, diff);
  EXPECT_LE(diff, 1) << "acceptance bound 1/255";
  EXPECT_EQ(diff, 0) << "expected a bit-exact match with Pillow";
}

TEST_P(PhotoTest, PreprocessMatchesNumpyTensor) {
  const Photo p = GetParam();
  const NpyArray expected = read_npy(kImages + p.stem + ".input.npy");
  ASSERT_EQ(expected.shape, (std::vector<std::int64_t>{3, 378, 378}));
  const std::vector<float> mine = preprocess_siglip(decode_image(kImages + p.file), 384, 378);
  ASSERT_EQ(mine.size(), expected.data.size());
  float worst = 0;
  for (std::size_t i = 0; i < mine.size(); ++i) worst = std::max(worst, std::abs(mine[i] - expected.data[i]));
  EXPECT_LE(worst, 1e-6f);
  // The generic entry point takes the same route for an image file.
  EXPECT_EQ(load_image_input(kImages + p.file, 384, 378), mine);
}

INSTANTIATE_TEST_SUITE_P(Photos, PhotoTest,
                         testing::Values(Photo{"rocket.jpg", "rocket"}, Photo{"astronaut.png", "astronaut"}),
                         [](const auto& info) { return std::string(info.param.stem); });

// ------------------------------------------------------------------ synthetic cases

struct ManifestLine {
  std::string kind, file;
  int width = 0, height = 0;
  std::string expected;
};

std::vector<ManifestLine> manifest(const std::string& kind) {
  std::ifstream in(kImages + "synthetic/manifest.txt");
  EXPECT_TRUE(in);
  std::vector<ManifestLine> lines;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    ManifestLine m;
    fields >> m.kind >> m.file >> m.width >> m.height >> m.expected;
    if (m.kind == kind) lines.push_back(m);
  }
  return lines;
}

TEST(ImageDecode, PngAndJpegVariantsMatchPillowConvertRgb) {
  const auto cases = manifest("decode");
  ASSERT_GE(cases.size(), 20u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.file);
    const RgbImage im = decode_image(kImages + "synthetic/" + c.file);
    EXPECT_EQ(im.width, c.width);
    EXPECT_EQ(im.height, c.height);
    const auto expected = read_bytes(kImages + "synthetic/" + c.expected);
    ASSERT_EQ(im.pixels.size(), expected.size());
    EXPECT_EQ(max_abs_diff(im.pixels, expected), 0);
  }
}

TEST(ImageDecode, FormatComesFromContentNotExtension) {
  TempDir tmp;
  const auto jpeg = read_bytes(kImages + "rocket.jpg");
  const std::string renamed = tmp.path("really_a_jpeg.png");
  write_bytes(renamed, jpeg.data(), jpeg.size());
  const RgbImage im = decode_image(renamed);
  EXPECT_EQ(im.width, 640);
  EXPECT_EQ(im.height, 427);
}

TEST(ImageResize, SyntheticCasesMatchPillowExactly) {
  const auto cases = manifest("resize");
  ASSERT_GE(cases.size(), 9u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.file + " -> " + std::to_string(c.width) + "x" + std::to_string(c.height));
    const RgbImage src = decode_image(kImages + "synthetic/" + c.file);
    const RgbImage out = resize_bicubic_pillow(src, c.width, c.height);
    EXPECT_EQ(out.width, c.width);
    EXPECT_EQ(out.height, c.height);
    const auto expected = read_bytes(kImages + "synthetic/" + c.expected);
    ASSERT_EQ(out.pixels.size(), expected.size());
    EXPECT_EQ(max_abs_diff(out.pixels, expected), 0);
  }
}

TEST(ImageResize, ConstantImageStaysConstant) {
  for (auto [w, h, ow, oh] : {std::array{37, 23, 384, 384}, std::array{37, 23, 5, 3}, std::array{1, 1, 384, 384},
                              std::array{1000, 3, 7, 300}}) {
    SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h) + " -> " + std::to_string(ow) + "x" + std::to_string(oh));
    const RgbImage out = resize_bicubic_pillow(solid(w, h, 0, 200, 255), ow, oh);
    ASSERT_EQ(out.pixels.size(), std::size_t(ow) * oh * 3);
    EXPECT_EQ(out.pixels, solid(ow, oh, 0, 200, 255).pixels);
  }
}

TEST(ImageResize, RejectsBadSizes) {
  const RgbImage im = solid(4, 4, 1, 2, 3);
  EXPECT_THROW(resize_bicubic_pillow(im, 0, 4), Error);
  EXPECT_THROW(resize_bicubic_pillow(im, 4, -1), Error);
  EXPECT_THROW(resize_bicubic_pillow(im, 40000, 4), Error);
  EXPECT_THROW(resize_bicubic_pillow(RgbImage{}, 4, 4), Error);
}

TEST(ImagePreprocess, NormalisesAndCropsTopLeftChw) {
  // Same size in and out: the resize is a copy, so the layout can be checked exactly.
  RgbImage im{8, 8, {}};
  for (int y = 0; y < 8; ++y)
    for (int x = 0; x < 8; ++x) im.pixels.insert(im.pixels.end(), {std::uint8_t(x * 30), std::uint8_t(y * 30), 255});
  const std::vector<float> t = preprocess_siglip(im, 8, 6);
  ASSERT_EQ(t.size(), 3u * 6 * 6);
  for (int y = 0; y < 6; ++y)
    for (int x = 0; x < 6; ++x) {
      EXPECT_FLOAT_EQ(t[0 * 36 + y * 6 + x], (x * 30 / 255.0f - 0.5f) / 0.5f);
      EXPECT_FLOAT_EQ(t[1 * 36 + y * 6 + x], (y * 30 / 255.0f - 0.5f) / 0.5f);
      EXPECT_EQ(t[2 * 36 + y * 6 + x], 1.0f);
    }
  EXPECT_EQ(t[0], -1.0f);
  EXPECT_THROW(preprocess_siglip(im, 8, 9), Error);
  EXPECT_THROW(preprocess_siglip(im, 0, 0), Error);
}

// ------------------------------------------------------------------ pre-processed inputs

TEST(ImageInput, AcceptsRawF32AndNpyTensors) {
  TempDir tmp;
  std::vector<float> values(3 * 6 * 6);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = -1.0f + 0.01f * float(i);
  const std::string raw = tmp.path("input.f32");
  write_bytes(raw, values.data(), values.size() * 4);
  EXPECT_EQ(load_image_input(raw, 8, 6), values);
  const std::string chw = tmp.path("chw.npy");
  write_npy_bytes(chw, "(3, 6, 6)", values);
  EXPECT_EQ(load_image_input(chw, 8, 6), values);
  const std::string nchw = tmp.path("nchw.npy");
  write_npy_bytes(nchw, "(1, 3, 6, 6)", values);
  EXPECT_EQ(load_image_input(nchw, 8, 6), values);
}

// ------------------------------------------------------------------ bad input

TEST(ImageBadInput, MissingFile) {
  const std::string path = "/nonexistent/dir/missing_image.png";
  expect_error([&] { decode_image(path); }, path, "cannot read");
  expect_error([&] { load_image_input(path, 384, 378); }, path, "cannot read");
}

TEST(ImageBadInput, NotAnImage) {
  TempDir tmp;
  const std::string path = tmp.path("notes.png");
  const std::string text = "this is not an image\n";
  write_bytes(path, text.data(), text.size());
  expect_error([&] { decode_image(path); }, path, "not a PNG or JPEG");
  const std::string empty = tmp.path("empty.jpg");
  write_bytes(empty, "", 0);
  expect_error([&] { decode_image(empty); }, empty, "not a PNG or JPEG");
}

TEST(ImageBadInput, TruncatedPng) {
  TempDir tmp;
  auto bytes = read_bytes(kImages + "astronaut.png");
  const std::string path = tmp.path("truncated.png");
  write_bytes(path, bytes.data(), bytes.size() / 2);
  expect_error([&] { decode_image(path); }, path, "truncated");
  const std::string header_only = tmp.path("header_only.png");
  write_bytes(header_only, bytes.data(), 20);
  expect_error([&] { decode_image(header_only); }, header_only, "cannot decode PNG");
}

TEST(ImageBadInput, CorruptPngData) {
  TempDir tmp;
  auto bytes = read_bytes(kImages + "synthetic/noise50x40.png");
  bytes[bytes.size() - 30] ^= 0x5A;  // inside the last IDAT: its CRC no longer matches
  const std::string path = tmp.path("corrupt.png");
  write_bytes(path, bytes.data(), bytes.size());
  expect_error([&] { decode_image(path); }, path, "cannot decode PNG");
}

TEST(ImageBadInput, TruncatedJpeg) {
  TempDir tmp;
  auto bytes = read_bytes(kImages + "rocket.jpg");
  const std::string path = tmp.path("truncated.jpg");
  write_bytes(path, bytes.data(), bytes.size() / 2);
  expect_error([&] { decode_image(path); }, path, "Premature end of JPEG file");
  const std::string progressive = tmp.path("truncated_progressive.jpg");
  bytes = read_bytes(kImages + "synthetic/jpeg_progressive.jpg");
  write_bytes(progressive, bytes.data(), bytes.size() * 2 / 3);
  expect_error([&] { decode_image(progressive); }, progressive, "cannot decode JPEG");
}

TEST(ImageBadInput, ZeroWidthPng) {
  const std::string path = kImages + "bad/zero_width.png";
  expect_error([&] { decode_image(path); }, path, "image has zero size 0x1");
}

TEST(ImageBadInput, HugeDimensionsRejectedBeforeAllocating) {
  const std::string png = kImages + "bad/huge_100000.png";
  expect_error([&] { decode_image(png); }, png, "100000x100000 exceeds the limit of 32768");
  const std::string pixels = kImages + "bad/too_many_pixels.png";
  expect_error([&] { decode_image(pixels); }, pixels, "240000000 pixels exceeds the limit of 89478485");
  const std::string jpeg = kImages + "bad/huge_60000.jpg";
  expect_error([&] { decode_image(jpeg); }, jpeg, "60000x60000 exceeds");
}

// A JPEG of headers only, as small as a decompression bomb gets: `components` channels
// of width x height, baseline or progressive, one DC scan of `scans` repeats and no data.
std::vector<std::uint8_t> jpeg_headers(int width, int height, int components, bool progressive, int scans = 1) {
  std::vector<std::uint8_t> j = {0xFF, 0xD8, 0xFF, 0xDB, 0x00, 0x43, 0x00};
  j.insert(j.end(), 64, 1);  // quantisation table 0: all ones
  const auto frame_length = static_cast<std::uint8_t>(8 + 3 * components);
  j.insert(j.end(), {0xFF, std::uint8_t(progressive ? 0xC2 : 0xC0), 0x00, frame_length, 8, std::uint8_t(height >> 8),
                     std::uint8_t(height), std::uint8_t(width >> 8), std::uint8_t(width), std::uint8_t(components)});
  for (int c = 1; c <= components; ++c) j.insert(j.end(), {std::uint8_t(c), 0x11, 0x00});
  // Huffman tables 0 (DC and AC): one 1-bit code for symbol 0.
  for (std::uint8_t table : {0x00, 0x10}) {
    j.insert(j.end(), {0xFF, 0xC4, 0x00, 0x14, table, 1});
    j.insert(j.end(), 15, 0);
    j.push_back(0);
  }
  for (int s = 0; s < scans; ++s) {
    j.insert(j.end(), {0xFF, 0xDA, 0x00, std::uint8_t(6 + 2 * components), std::uint8_t(components)});
    for (int c = 1; c <= components; ++c) j.insert(j.end(), {std::uint8_t(c), 0x00});
    j.insert(j.end(), {0x00, std::uint8_t(progressive ? 0 : 63), 0x00, 0x00});
  }
  j.insert(j.end(), {0xFF, 0xD9});
  return j;
}

// Issue 22: a 632-byte JPEG declaring 14000x14000 decoded into 588 MB, a progressive one
// needed 1.18 GB. The pixel limit (Pillow's) and libjpeg's memory cap refuse both from
// the headers, naming the declared size, before the big buffers exist.
TEST(ImageBadInput, DecodingMemoryIsBounded) {
  TempDir tmp;
  const std::string baseline = tmp.path("bomb14000.jpg");
  const auto big = jpeg_headers(14000, 14000, 3, false);
  write_bytes(baseline, big.data(), big.size());
  expect_error([&] { decode_image(baseline); }, baseline, "14000x14000 = 196000000 pixels exceeds the limit of 89478485");

  // Under the pixel limit, but CMYK coefficients (648 MB) on top of the samples (567 MB).
  const std::string progressive = tmp.path("bomb9000_progressive.jpg");
  const auto cmyk = jpeg_headers(9000, 9000, 4, true);
  write_bytes(progressive, cmyk.data(), cmyk.size());
  const auto start = std::chrono::steady_clock::now();
  expect_error([&] { decode_image(progressive); }, progressive,
               "image size 9000x9000 (4 components, progressive) needs more than the decoding limit of 1024 MiB");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST(ImageBadInput, JpegScansAreBounded) {
  TempDir tmp;
  const std::string path = tmp.path("many_scans.jpg");
  const auto many = jpeg_headers(8, 8, 1, true, 1100);
  write_bytes(path, many.data(), many.size());
  expect_error([&] { decode_image(path); }, path, "cannot decode JPEG: more than 1000 scans");
}

TEST(ImageBadInput, NpyOfWrongShape) {
  TempDir tmp;
  const std::string path = tmp.path("wrong_shape.npy");
  write_npy_bytes(path, "(3, 5, 6)", std::vector<float>(90, 0.0f));
  expect_error([&] { load_image_input(path, 8, 6); }, path, "npy shape (3, 5, 6)");
  const std::string batch = tmp.path("batch2.npy");
  write_npy_bytes(batch, "(2, 3, 6, 6)", std::vector<float>(216, 0.0f));
  expect_error([&] { load_image_input(batch, 8, 6); }, batch, "npy shape (2, 3, 6, 6)");
}

TEST(ImageBadInput, RawF32OfWrongSize) {
  TempDir tmp;
  const std::string path = tmp.path("short.f32");
  std::vector<float> values(3 * 6 * 6 - 1, 0.5f);
  write_bytes(path, values.data(), values.size() * 4);
  expect_error([&] { load_image_input(path, 8, 6); }, path, "has 428 bytes, expected 3*6*6*4 = 432");
}

TEST(ImageBadInput, NonFiniteValues) {
  TempDir tmp;
  std::vector<float> values(3 * 6 * 6, 0.25f);
  values[40] = std::numeric_limits<float>::quiet_NaN();
  const std::string raw = tmp.path("nan.f32");
  write_bytes(raw, values.data(), values.size() * 4);
  expect_error([&] { load_image_input(raw, 8, 6); }, raw, "non-finite value nan at index 40 (channel 1, row 0");
  values[40] = 0.0f;
  values[3] = std::numeric_limits<float>::infinity();
  const std::string npy = tmp.path("inf.npy");
  write_npy_bytes(npy, "(3, 6, 6)", values);
  expect_error([&] { load_image_input(npy, 8, 6); }, npy, "non-finite value inf at index 3");
}

}  // namespace
