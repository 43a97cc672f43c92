// NumPy .npy arrays (preprocessed image inputs, saved embeddings).
#include "formats/npy.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tilevit;
  const std::string path = fuzz::input_file(data, size, ".npy");
  fuzz::expect_clean([&] { formats::read_npy(path); });
  return 0;
}
