// Safetensors checkpoints: open (validates the whole header), then read every tensor of
// a supported dtype that is small enough to convert quickly.
#include <vector>

#include "formats/safetensors.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tilevit;
  const std::string path = fuzz::input_file(data, size, ".safetensors");
  fuzz::expect_clean([&] {
    const auto file = formats::SafetensorsFile::open(path);
    for (const std::string& name : file->names()) {
      fuzz::expect_clean([&] {
        const auto info = file->info(name);
        if (!info || info->elements() > (std::int64_t{1} << 20)) return;
        std::vector<float> values(info->elements());
        file->read_f32(name, values);
      });
    }
  });
  return 0;
}
