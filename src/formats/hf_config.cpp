#include "formats/hf_config.hpp"

#include <array>
#include <charconv>
#include <cstdlib>
#include <cmath>
#include <nlohmann/json.hpp>

#include "support/error.hpp"
#include "support/json_number.hpp"

namespace tilevit::formats {
namespace {

using nlohmann::json;
using model::Family;

std::string one_line(const std::string& text) {
  std::string out;
  for (char ch : text.substr(0, 160)) out += (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ? ' ' : ch;
  return out;
}

json parse_object(const std::string& text, const std::string& file) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw Error(file + ": not valid JSON: " + one_line(e.what()));
  }
  if (!j.is_object()) throw Error(file + ": expected a JSON object, got " + std::string(j.type_name()));
  return j;
}

// The model's own check of what a file set (ViTConfig::validate, a command-line check that
// exits 2): here its failure is the file's, exit 3, after `where` (the file or field).
void validate_from(const model::ViTConfig& c, const std::string& where) {
  try {
    c.validate();
  } catch (const Error& e) {
    throw Error(where + ": " + e.what(), kExitBadInput);
  }
}

// The keys of one JSON object, read with bounds; errors name file and key path.
class Fields {
 public:
  Fields(const json& object, std::string file, std::string path)
      : j_(object), file_(std::move(file)), path_(std::move(path)) {}

  bool has(const char* key) const { return j_.contains(key) && !j_.at(key).is_null(); }
  const json& at(const char* key) const { return j_.at(key); }
  std::string field(const char* key) const { return file_ + ": " + path_ + key; }

  int integer(const char* key, int fallback, int min, int max, bool required = false) const {
    if (!has(key)) {
      if (required) throw Error(field(key) + ": missing");
      return fallback;
    }
    return json_integer<int>(j_.at(key), field(key), min, max);
  }
  double real(const char* key, double fallback, double min, double max) const {
    if (!has(key)) return fallback;
    const double v = json_real<double>(j_.at(key), field(key));
    if (!(v > min && v <= max))
      throw Error(field(key) + ": " + std::to_string(v) + " is outside (" + std::to_string(min) + ", " +
                  std::to_string(max) + "]");
    return v;
  }
  bool boolean(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    if (!j_.at(key).is_boolean()) throw Error(field(key) + ": expected true or false");
    return j_.at(key).get<bool>();
  }
  std::string text(const char* key, const std::string& fallback, bool required = false) const {
    if (!has(key)) {
      if (required) throw Error(field(key) + ": missing");
      return fallback;
    }
    if (!j_.at(key).is_string()) throw Error(field(key) + ": expected a string");
    return j_.at(key).get<std::string>();
  }
  Fields object(const char* key) const {
    if (!has(key) || !j_.at(key).is_object()) throw Error(field(key) + ": missing or not an object");
    return Fields(j_.at(key), file_, path_ + key + ".");
  }

 private:
  const json& j_;
  std::string file_, path_;
};

model::Activation activation(const Fields& f, const char* fallback) {
  const std::string act = f.text("hidden_act", fallback);
  if (act == "gelu") return model::Activation::gelu_erf;
  if (act == "gelu_pytorch_tanh" || act == "gelu_new" || act == "gelu_fast") return model::Activation::gelu_tanh;
  if (act == "quick_gelu") return model::Activation::quick_gelu;
  throw Error(f.field("hidden_act") + ": \"" + one_line(act) + "\" is not supported (gelu, gelu_pytorch_tanh, quick_gelu)");
}

// The family's structure before the config's sizes (the presets hold each family's rules).
model::ViTConfig family_base(Family family, bool registers) {
  switch (family) {
    case Family::siglip: return model::ViTConfig::so400m();
    case Family::clip: return model::ViTConfig::preset("clip-b32");
    case Family::dinov2: return model::ViTConfig::preset(registers ? "dinov2-b-reg" : "dinov2-b");
    case Family::vit: return model::ViTConfig::preset("vit-b16");
  }
  return {};
}

void read_sizes(const Fields& v, Family family, model::ViTConfig& c) {
  c.width = v.integer("hidden_size", 0, 1, 16384, true);
  c.layers = c.max_layers = v.integer("num_hidden_layers", 0, 1, 1024, true);
  c.heads = v.integer("num_attention_heads", 0, 1, 16384, true);
  if (c.width % c.heads != 0)
    throw Error(v.field("num_attention_heads") + ": " + std::to_string(c.heads) + " does not divide hidden_size " +
                std::to_string(c.width));
  c.head_dim = c.width / c.heads;
  c.patch = v.integer("patch_size", 0, 1, 64, true);
  const int table_image = v.integer("image_size", 0, 1, 4096, true);
  if (table_image < c.patch)
    throw Error(v.field("image_size") + ": " + std::to_string(table_image) + " is smaller than patch_size");
  c.position_grid = table_image / c.patch;
  c.image_size = c.position_grid * c.patch;
  c.resize_size = table_image;
  if (v.integer("num_channels", 3, 1, 64) != 3) throw Error(v.field("num_channels") + ": must be 3");
  if (family == Family::dinov2) {
    const double ratio = v.real("mlp_ratio", 4.0, 0.0, 64.0);
    const double mlp = ratio * c.width;
    if (mlp != std::floor(mlp) || mlp > 65536)
      throw Error(v.field("mlp_ratio") + ": hidden_size x mlp_ratio = " + std::to_string(mlp) + " is not an integer <= 65536");
    c.mlp = static_cast<int>(mlp);
    if (v.boolean("use_swiglu_ffn", false))
      throw Error(v.field("use_swiglu_ffn") + ": the SwiGLU MLP of DINOv2-g is not supported yet (it also needs two chips)");
  } else {
    c.mlp = v.integer("intermediate_size", 3072, 1, 65536);
  }
  if (!v.boolean("qkv_bias", true)) throw Error(v.field("qkv_bias") + ": q/k/v projections without bias are not supported");
}

}  // namespace

model::ViTConfig parse_hf_config(const std::string& text, const std::string& file) {
  const json root = parse_object(text, file);
  const Fields top(root, file, "");
  const std::string type = top.text("model_type", "", true);
  Family family;
  bool nested = false, registers = false;
  if (type == "siglip" || type == "siglip_vision_model") {
    family = Family::siglip;
    nested = type == "siglip";
  } else if (type == "clip" || type == "clip_vision_model") {
    family = Family::clip;
    nested = type == "clip";
  } else if (type == "dinov2" || type == "dinov2_with_registers") {
    family = Family::dinov2;
    registers = type == "dinov2_with_registers";
  } else if (type == "vit") {
    family = Family::vit;
  } else {
    throw Error(top.field("model_type") + ": \"" + one_line(type) +
                "\" is not a supported vision model (siglip, siglip_vision_model, clip, clip_vision_model, dinov2, "
                "dinov2_with_registers, vit)");
  }
  const Fields v = nested ? top.object("vision_config") : top;
  model::ViTConfig c = family_base(family, registers);
  c.name = one_line(top.text("_name_or_path", type));
  if (c.name.empty()) c.name = type;
  read_sizes(v, family, c);
  const char* default_act = family == Family::siglip ? "gelu_pytorch_tanh" : family == Family::clip ? "quick_gelu" : "gelu";
  c.activation = activation(v, default_act);
  const double default_eps = family == Family::clip ? 1e-5 : family == Family::vit ? 1e-12 : 1e-6;
  c.layer_norm_eps = static_cast<float>(v.real("layer_norm_eps", default_eps, 0.0, 0.1));
  if (registers) c.register_tokens = v.integer("num_register_tokens", 4, 0, 64);
  if (family == Family::siglip && !v.boolean("vision_use_head", true)) c.pooling = model::Pooling::tokens;
  if (family == Family::clip) c.projection_dim = (nested ? top : v).integer("projection_dim", 512, 1, 65536);
  validate_from(c, file);
  return c;
}

namespace {

// A size entry: an integer, {"shortest_edge": n} or {"height": n, "width": n} (square).
struct SizeSpec {
  int side = 0;
  bool shortest_edge = false;
};

SizeSpec size_spec(const Fields& f, const char* key) {
  const std::string field = f.field(key);
  if (!f.has(key)) throw Error(field + ": missing");
  const json& j = f.at(key);
  if (j.is_number()) return {json_integer<int>(j, field, 1, 4096), false};
  if (!j.is_object()) throw Error(field + ": expected an integer or an object");
  const Fields s(j, field.substr(0, field.find(": ")), std::string(key) + ".");
  if (s.has("shortest_edge")) {
    if (s.has("longest_edge")) throw Error(s.field("longest_edge") + ": a longest-edge limit is not supported");
    return {s.integer("shortest_edge", 0, 1, 4096, true), true};
  }
  const int h = s.integer("height", 0, 1, 4096, true), w = s.integer("width", 0, 1, 4096, true);
  if (h != w) throw Error(s.field("width") + ": " + std::to_string(w) + " x " + std::to_string(h) + " is not square");
  return {h, false};
}

std::array<float, 3> channel_values(const Fields& f, const char* key, float fallback) {
  std::array<float, 3> out{fallback, fallback, fallback};
  if (!f.has(key)) return out;
  const json& j = f.at(key);
  if (j.is_number()) {
    out.fill(json_real<float>(j, f.field(key)));
    return out;
  }
  if (!j.is_array() || j.size() != 3) throw Error(f.field(key) + ": expected 3 numbers (R, G, B)");
  for (int i = 0; i < 3; ++i) out[i] = json_real<float>(j[i], f.field(key));
  return out;
}

}  // namespace

void apply_preprocessor_config(const std::string& text, const std::string& file, model::ViTConfig& c) {
  const json root = parse_object(text, file);
  const Fields f(root, file, "");
  model::Preprocessing& p = c.preprocessing;
  const SizeSpec size = size_spec(f, "size");
  if (!f.boolean("do_resize", true)) throw Error(f.field("do_resize") + ": false is not supported (images are resized)");
  p.shortest_edge = size.shortest_edge;
  c.resize_size = size.side;
  p.center_crop = f.boolean("do_center_crop", f.has("crop_size"));
  int crop = size.side;
  if (p.center_crop) {
    const SizeSpec cs = size_spec(f, "crop_size");
    if (cs.shortest_edge) throw Error(f.field("crop_size") + ": expected a square size");
    if (cs.side > size.side) throw Error(f.field("crop_size") + ": larger than the resized image");
    crop = p.crop_size = cs.side;
  } else if (p.shortest_edge) {
    throw Error(f.field("do_center_crop") + ": a shortest-edge resize needs a centre crop (images must be square)");
  }
  p.resample = f.integer("resample", c.family == model::Family::vit ? 2 : 3, 0, 5);
  if (p.resample != 2 && p.resample != 3)
    throw Error(f.field("resample") + ": " + std::to_string(p.resample) + " is not supported (2 bilinear, 3 bicubic)");
  if (f.boolean("do_rescale", true)) {
    const double factor = f.real("rescale_factor", 1.0 / 255.0, 0.0, 1.0);
    if (std::abs(factor - 1.0 / 255.0) > 1e-12) throw Error(f.field("rescale_factor") + ": only 1/255 is supported");
  } else {
    throw Error(f.field("do_rescale") + ": false is not supported (8-bit images are rescaled by 1/255)");
  }
  const bool normalize = f.boolean("do_normalize", true);
  p.mean = normalize ? channel_values(f, "image_mean", 0.5f) : std::array<float, 3>{0, 0, 0};
  p.std = normalize ? channel_values(f, "image_std", 0.5f) : std::array<float, 3>{1, 1, 1};
  for (int i = 0; i < 3; ++i) {
    if (!(p.std[i] > 0.0f && p.std[i] < 1e30f))
      throw Error(f.field("image_std") + ": " + std::to_string(p.std[i]) + " is not a positive finite number");
    if (!(p.mean[i] > -1e30f && p.mean[i] < 1e30f))
      throw Error(f.field("image_mean") + ": " + std::to_string(p.mean[i]) + " is not a finite number");
  }
  const char* crop_key = p.center_crop ? "crop_size" : "size";
  if (crop < c.patch) throw Error(f.field(crop_key) + ": smaller than one patch");
  c.image_size = crop / c.patch * c.patch;
  if (p.center_crop && c.image_size == crop) p.crop_size = 0;  // the crop is the model's input
  validate_from(c, f.field(crop_key) + ": " + std::to_string(crop) + " does not suit the model");
}

std::map<std::string, std::string> parse_safetensors_index(const std::string& text, const std::string& file) {
  const json root = parse_object(text, file);
  if (!root.contains("weight_map") || !root.at("weight_map").is_object())
    throw Error(file + ": weight_map: missing or not an object");
  std::map<std::string, std::string> out;
  std::map<std::string, int> shards;
  for (const auto& [name, shard] : root.at("weight_map").items()) {
    if (!shard.is_string()) throw Error(file + ": weight_map." + one_line(name) + ": expected a file name");
    const std::string s = shard.get<std::string>();
    if (s.empty() || s.size() > 255) throw Error(file + ": weight_map." + one_line(name) + ": bad file name length");
    if (shards.emplace(s, 0).second && shards.size() > kMaxShards)
      throw Error(file + ": weight_map: more than " + std::to_string(kMaxShards) + " shard files");
    out.emplace(name, s);
  }
  return out;
}

namespace {

// A float as the shortest decimal that reads back to it (1e-06, not 9.99999997e-07).
double decimal(float value) {
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, value).ptr;
  return std::strtod(std::string(text, end).c_str(), nullptr);
}

json family_config(const model::ViTConfig& c) {
  using model::Family;
  json j;
  const int table_image = c.table_grid() == c.grid() && c.resize_size / c.patch == c.grid() && !c.preprocessing.shortest_edge
                              ? c.resize_size
                              : c.table_grid() * c.patch;
  j["hidden_size"] = c.width;
  j["num_hidden_layers"] = c.layers;
  j["num_attention_heads"] = c.heads;
  j["num_channels"] = c.channels;
  j["image_size"] = table_image;
  j["patch_size"] = c.patch;
  j["hidden_act"] = model::activation_name(c.activation);
  j["layer_norm_eps"] = decimal(c.layer_norm_eps);
  j["torch_dtype"] = "float32";
  switch (c.family) {
    case Family::siglip:
      j["architectures"] = {"SiglipVisionModel"};
      j["model_type"] = "siglip_vision_model";
      j["intermediate_size"] = c.mlp;
      if (c.pooling != model::Pooling::map_head) j["vision_use_head"] = false;
      break;
    case Family::clip:
      j["architectures"] = {"CLIPVisionModelWithProjection"};
      j["model_type"] = "clip_vision_model";
      j["intermediate_size"] = c.mlp;
      j["projection_dim"] = c.projection_dim;
      break;
    case Family::dinov2:
      j["architectures"] = {c.register_tokens ? "Dinov2WithRegistersModel" : "Dinov2Model"};
      j["model_type"] = c.register_tokens ? "dinov2_with_registers" : "dinov2";
      j["mlp_ratio"] = c.mlp / c.width;
      j["layerscale_value"] = 1.0;
      j["use_swiglu_ffn"] = false;
      j["qkv_bias"] = true;
      if (c.register_tokens) j["num_register_tokens"] = c.register_tokens;
      break;
    case Family::vit:
      j["architectures"] = {"ViTModel"};
      j["model_type"] = "vit";
      j["intermediate_size"] = c.mlp;
      j["qkv_bias"] = true;
      break;
  }
  return j;
}

json square(int side) { return {{"height", side}, {"width", side}}; }

}  // namespace

std::string hf_config_json(const model::ViTConfig& c) {
  if (c.family == model::Family::dinov2 && c.mlp % c.width != 0)
    throw Error("model " + c.name + ": DINOv2 configs give the MLP as an integer mlp_ratio", kExitInternal);
  return family_config(c).dump(2) + "\n";
}

std::string hf_preprocessor_json(const model::ViTConfig& c) {
  static const char* kProcessor[] = {"SiglipImageProcessor", "CLIPImageProcessor", "BitImageProcessor",
                                     "ViTImageProcessor"};
  const model::Preprocessing& p = c.preprocessing;
  json j;
  j["image_processor_type"] = kProcessor[static_cast<int>(c.family)];
  j["do_resize"] = true;
  j["size"] = p.shortest_edge ? json{{"shortest_edge", c.resize_size}} : square(c.resize_size);
  j["resample"] = p.resample;
  j["do_center_crop"] = p.center_crop;
  if (p.center_crop) j["crop_size"] = square(p.crop_size ? p.crop_size : c.image_size);
  j["do_rescale"] = true;
  j["rescale_factor"] = 1.0 / 255.0;
  j["do_normalize"] = true;
  j["image_mean"] = {decimal(p.mean[0]), decimal(p.mean[1]), decimal(p.mean[2])};
  j["image_std"] = {decimal(p.std[0]), decimal(p.std[1]), decimal(p.std[2])};
  j["do_convert_rgb"] = true;
  return j.dump(2) + "\n";
}

}  // namespace tilevit::formats
