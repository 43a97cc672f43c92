// Hugging Face checkpoint metadata: config.json, then (when it parses) the same bytes as
// preprocessor_config.json applied to it, and as model.safetensors.index.json. A config
// that parses must give a shape whose sizes the reference can allocate (validate()).
#include "formats/hf_config.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tilevit;
  const std::string text(fuzz::as_text(data, size));
  fuzz::expect_clean([&] {
    model::ViTConfig config = formats::parse_hf_config(text, "config.json");
    config.validate();
    formats::hf_config_json(config);
    formats::apply_preprocessor_config(text, "preprocessor_config.json", config);
    formats::hf_preprocessor_json(config);
  });
  fuzz::expect_clean([&] { formats::parse_safetensors_index(text, "model.safetensors.index.json"); });
  return 0;
}
