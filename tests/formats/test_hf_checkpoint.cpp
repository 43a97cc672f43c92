// Hugging Face checkpoint directories: config parsing, export and reload round trips,
// shards, and the path rules (no traversal, no symlink escape, missing shard named).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "formats/hf_checkpoint.hpp"
#include "formats/hf_config.hpp"
#include "model/random_model.hpp"
#include "reference/forward.hpp"
#include "support/error.hpp"

using namespace tilevit;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("tilevit_hf_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

// The message of the Error `body` throws (exit 3), or a failure.
template <typename F>
std::string error_of(F&& body) {
  try {
    body();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitBadInput) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

std::string export_preset(const std::string& preset, int shards, const std::string& name) {
  const fs::path d = fresh_dir(name);
  const auto config = model::ViTConfig::preset(preset);
  formats::write_hf_checkpoint(d.string(), model::RandomModelSource(config, 3), config, {{"format", "pt"}}, shards);
  return d.string();
}

}  // namespace

TEST(HfConfig, So400mConfigGivesThePreset) {
  const std::string text = R"({"model_type": "siglip", "vision_config": {"hidden_size": 1152, "image_size": 384,
      "intermediate_size": 4304, "model_type": "siglip_vision_model", "num_attention_heads": 16,
      "num_hidden_layers": 27, "patch_size": 14}})";
  auto c = formats::parse_hf_config(text, "config.json");
  formats::apply_preprocessor_config(
      R"({"do_normalize": true, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5], "resample": 3,
          "rescale_factor": 0.00392156862745098, "size": {"height": 384, "width": 384}})",
      "preprocessor_config.json", c);
  const auto p = model::ViTConfig::so400m();
  EXPECT_EQ(c.width, p.width);
  EXPECT_EQ(c.mlp, p.mlp);
  EXPECT_EQ(c.image_size, 378);
  EXPECT_EQ(c.resize_size, 384);
  EXPECT_EQ(c.head_dim, 72);
  EXPECT_EQ(c.layer_norm_eps, 1e-6f);
  EXPECT_EQ(c.family, model::Family::siglip);
  EXPECT_EQ(c.pooling, model::Pooling::map_head);
}

TEST(HfConfig, FullClipTakesVisionConfigAndTopLevelProjection) {
  const auto c = formats::parse_hf_config(
      R"({"model_type": "clip", "projection_dim": 768, "vision_config": {"hidden_size": 1024, "image_size": 336,
          "intermediate_size": 4096, "num_attention_heads": 16, "num_hidden_layers": 24, "patch_size": 14}})",
      "config.json");
  EXPECT_EQ(c.family, model::Family::clip);
  EXPECT_EQ(c.projection_dim, 768);
  EXPECT_EQ(c.tokens(), 577);
  EXPECT_EQ(c.activation, model::Activation::quick_gelu);
  EXPECT_EQ(c.layer_norm_eps, 1e-5f);
  EXPECT_TRUE(c.class_token);
  EXPECT_TRUE(c.pre_layernorm);
}

TEST(HfConfig, BadConfigsNameFileAndField) {
  EXPECT_NE(error_of([] { formats::parse_hf_config(R"({"model_type": "bert"})", "c.json"); })
                .find("c.json: model_type: \"bert\" is not a supported"),
            std::string::npos);
  EXPECT_NE(error_of([] { formats::parse_hf_config(R"({"model_type": "vit", "num_hidden_layers": 2})", "c.json"); })
                .find("c.json: hidden_size: missing"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              formats::parse_hf_config(R"({"model_type": "dinov2", "hidden_size": 1536, "num_hidden_layers": 40,
                  "num_attention_heads": 24, "patch_size": 14, "image_size": 518, "use_swiglu_ffn": true})",
                                       "c.json");
            }).find("use_swiglu_ffn"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              formats::parse_hf_config(R"({"model_type": "clip", "vision_config": {"hidden_size": 1e300}})", "c.json");
            }).find("c.json: vision_config.hidden_size"),
            std::string::npos);
  EXPECT_NE(error_of([] { formats::parse_hf_config("{", "c.json"); }).find("c.json: not valid JSON"), std::string::npos);
  EXPECT_THROW(model::ViTConfig::preset("dinov2-g"), Error);
}

// Issue 34, item 14: what the model refuses in a preprocessor config is the file's error
// (exit 3, error_of checks it), naming the file and the field.
TEST(HfConfig, PreprocessorValuesTheModelRefusesNameTheFileAndFieldAndExit3) {
  const auto apply = [](const std::string& fields) {
    model::ViTConfig c = model::ViTConfig::so400m();
    c.position_grid = 27;  // as config.json's image_size 384 sets it
    formats::apply_preprocessor_config("{" + fields + "}", "dir/preprocessor_config.json", c);
  };
  const std::string size = error_of([&] { apply(R"("size": {"height": 99, "width": 99})"); });
  EXPECT_EQ(size.rfind("dir/preprocessor_config.json: size: 99 does not suit the model: ", 0), 0u) << size;
  EXPECT_NE(size.find("position table is 27x27"), std::string::npos) << size;
  EXPECT_EQ(error_of([&] { apply(R"("size": {"height": 384, "width": 384}, "image_std": 0)"); }),
            "dir/preprocessor_config.json: image_std: 0.000000 is not a positive finite number");
  EXPECT_NE(error_of([&] { apply(R"("size": 384, "image_std": [0.5, -1, 0.5])"); }).find("preprocessor_config.json: image_std: "),
            std::string::npos);
}

TEST(HfCheckpoint, ExportedDirectoriesReloadToTheSameModel) {
  for (const std::string preset : {"small", "clip-tiny", "dinov2-reg-tiny", "vit-tiny"}) {
    for (int shards : {1, 3}) {
      const std::string dir = export_preset(preset, shards, preset + std::to_string(shards));
      const auto ck = formats::HfCheckpoint::open(dir);
      const auto want = model::ViTConfig::preset(preset);
      const auto& got = ck->config();
      EXPECT_EQ(got.family, want.family) << preset;
      EXPECT_EQ(got.tokens(), want.tokens()) << preset;
      EXPECT_EQ(got.image_size, want.image_size) << preset;
      EXPECT_EQ(got.resize_size, want.resize_size) << preset;
      EXPECT_EQ(got.preprocessing.mean, want.preprocessing.mean) << preset;
      EXPECT_EQ(got.output_width(), want.output_width()) << preset;
      EXPECT_EQ(got.parameter_count(), want.parameter_count()) << preset;
      const reference::ImageBatch images{model::random_image(want, 5, 0)};
      const auto a = reference::forward_fp32(model::load_weights(*ck, got), images);
      const auto b = reference::forward_fp32(model::load_weights(model::RandomModelSource(want, 3), want), images);
      EXPECT_EQ(a, b) << preset << " shards " << shards;
      fs::remove_all(dir);
    }
  }
}

TEST(HfCheckpoint, ShardIndexCannotLeaveTheDirectory) {
  const std::string dir = export_preset("clip-tiny", 2, "paths");
  const fs::path index = fs::path(dir) / "model.safetensors.index.json";
  const std::string shard = "model-00001-of-00002.safetensors";
  auto with_shard = [&](const std::string& file) {
    write_text(index, R"({"weight_map": {"vision_model.post_layernorm.weight": ")" + file + R"("}})");
    return error_of([&] { formats::HfCheckpoint::open(dir); });
  };
  EXPECT_NE(with_shard("../" + shard).find("leaves the checkpoint directory"), std::string::npos);
  EXPECT_NE(with_shard("/etc/passwd").find("is an absolute path"), std::string::npos);
  const std::string missing = with_shard("model-00009-of-00009.safetensors");
  EXPECT_NE(missing.find("model.safetensors.index.json: weight_map.vision_model.post_layernorm.weight"),
            std::string::npos)
      << missing;
  EXPECT_NE(missing.find("is missing"), std::string::npos) << missing;
  const fs::path outside = fresh_dir("outside");
  fs::create_directories(outside);
  fs::copy_file(fs::path(dir) / shard, outside / shard);
  fs::create_symlink(outside / shard, fs::path(dir) / "link.safetensors");
  EXPECT_NE(with_shard("link.safetensors").find("outside the checkpoint directory"), std::string::npos);
  fs::remove_all(dir);
  fs::remove_all(outside);
}

TEST(HfCheckpoint, TensorShapesMustMatchTheConfig) {
  const std::string dir = export_preset("vit-tiny", 1, "shapes");
  const fs::path config = fs::path(dir) / "config.json";
  std::ifstream in(config);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  text.replace(text.find("\"intermediate_size\": 256"), 24, "\"intermediate_size\": 512");
  write_text(config, text);
  const auto ck = formats::HfCheckpoint::open(dir);
  const std::string message = error_of([&] { model::load_weights(*ck, ck->config()); });
  EXPECT_NE(message.find("encoder.layer.0.intermediate.dense.weight has shape [256,128], expected [512,128]"),
            std::string::npos)
      << message;
  fs::remove_all(dir);
}
