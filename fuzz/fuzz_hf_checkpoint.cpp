// A Hugging Face checkpoint directory as `--model DIR` opens it: the input is its
// model.safetensors, beside a fixed config.json and preprocessor_config.json (CLIP's
// tiny preset, whose tower sits under a prefix); open (whole-header validation, the tower's
// prefix found from the tensor names), then load every weight the config needs.
#include <filesystem>

#include "formats/hf_checkpoint.hpp"
#include "formats/hf_config.hpp"
#include "fuzz_support.hpp"
#include "model/weights.hpp"

namespace {

// One checkpoint directory per process, its config files written once.
std::string checkpoint_directory() {
  using namespace tilevit;
  const std::filesystem::path dir = fuzz::scratch_path(".checkpoint");
  std::filesystem::create_directories(dir);
  model::ViTConfig c = model::ViTConfig::preset("clip-tiny");
  c.layers = 1;
  std::ofstream(dir / "config.json") << formats::hf_config_json(c);
  std::ofstream(dir / "preprocessor_config.json") << formats::hf_preprocessor_json(c);
  return dir.string();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tilevit;
  static const std::string dir = checkpoint_directory();
  std::ofstream(dir + "/model.safetensors", std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  fuzz::expect_clean([&] {
    const auto checkpoint = formats::HfCheckpoint::open(dir);
    model::ViTConfig config = checkpoint->config();
    config.layers = 1;
    model::load_weights(*checkpoint, config);
  });
  return 0;
}
