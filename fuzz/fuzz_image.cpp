// PNG/JPEG decoding and the SigLIP preprocessing after it (resize to 32, crop 28, as the
// small preset does). Images declaring more than 4 M pixels are skipped: decoding them
// takes seconds under the sanitizers, and the limits for large images have unit tests
// (tests/formats/test_image.cpp), so the fuzzer's time goes to the parsers instead.
#include "formats/image.hpp"
#include "fuzz_support.hpp"

namespace {

std::uint32_t be16(const std::uint8_t* p) { return std::uint32_t{p[0]} << 8 | p[1]; }
std::uint32_t be32(const std::uint8_t* p) { return be16(p) << 16 | be16(p + 2); }

// Pixels the header declares (PNG IHDR, JPEG SOFn), 0 when none is found.
std::uint64_t declared_pixels(const std::uint8_t* data, std::size_t size) {
  if (size >= 24 && data[0] == 0x89 && data[1] == 'P') return std::uint64_t{be32(data + 16)} * be32(data + 20);
  for (std::size_t i = 2; i + 9 <= size && data[i] == 0xFF;) {
    const std::uint8_t marker = data[i + 1];
    const bool sof = marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
    if (sof) return std::uint64_t{be16(data + i + 5)} * be16(data + i + 7);
    i += 2 + be16(data + i + 2);
  }
  return 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tilevit;
  if (declared_pixels(data, size) > (std::uint64_t{1} << 22)) return 0;
  const std::string path = fuzz::input_file(data, size, ".img");
  fuzz::expect_clean([&] { formats::preprocess_siglip(formats::decode_image(path), 32, 28); });
  return 0;
}
