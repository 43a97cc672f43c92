#include "package/config_codec.hpp"

#include <string>

#include "support/error.hpp"
#include "support/json_number.hpp"

namespace tilevit::package {
namespace {

using model::ViTConfig;

const char* resize_name(model::PositionResize r) {
  switch (r) {
    case model::PositionResize::none: return "none";
    case model::PositionResize::bicubic: return "bicubic";
    case model::PositionResize::bicubic_antialias: return "bicubic_antialias";
  }
  return "?";
}

// The enum value whose name is `text`, among the first `count` values.
template <typename E, typename Name>
E enum_named(const nlohmann::json& value, int count, Name name, const char* field) {
  const std::string text = value.get<std::string>();
  for (int i = 0; i < count; ++i)
    if (text == name(static_cast<E>(i))) return static_cast<E>(i);
  throw Error(std::string("features.") + field + ": unknown value \"" + text + "\"");
}

nlohmann::json float3(const std::array<float, 3>& v) { return nlohmann::json::array({v[0], v[1], v[2]}); }

std::array<float, 3> read_float3(const nlohmann::json& j, const char* field) {
  if (!j.is_array() || j.size() != 3) throw Error(std::string("features.") + field + ": expected 3 numbers");
  return {json_real<float>(j[0], field), json_real<float>(j[1], field), json_real<float>(j[2], field)};
}

nlohmann::json features_of(const ViTConfig& c) {
  const model::Preprocessing& p = c.preprocessing;
  nlohmann::json j = {{"family", model::family_name(c.family)},
                      {"activation", model::activation_name(c.activation)},
                      {"class_token", c.class_token},
                      {"register_tokens", c.register_tokens},
                      {"pre_layernorm", c.pre_layernorm},
                      {"layer_scale", c.layer_scale},
                      {"patch_bias", c.patch_bias},
                      {"position_grid", c.position_grid},
                      {"position_resize", resize_name(c.position_resize)},
                      {"pooling", model::pooling_name(c.pooling)},
                      {"projection_dim", c.projection_dim},
                      {"preprocessing",
                       {{"shortest_edge", p.shortest_edge},
                        {"center_crop", p.center_crop},
                        {"crop_size", p.crop_size},
                        {"resample", p.resample},
                        {"mean", float3(p.mean)},
                        {"std", float3(p.std)}}}};
  return j;
}

}  // namespace

nlohmann::json family_features_json(const ViTConfig& c) {
  nlohmann::json j = features_of(c);
  if (j == features_of(ViTConfig{})) return nullptr;
  return j;
}

void read_family_features(const nlohmann::json& j, ViTConfig& c) {
  using model::Activation, model::Family, model::Pooling, model::PositionResize;
  c.family = enum_named<Family>(j.at("family"), 4, model::family_name, "family");
  c.activation = enum_named<Activation>(j.at("activation"), 3, model::activation_name, "activation");
  c.class_token = j.at("class_token").get<bool>();
  c.register_tokens = json_integer<int>(j.at("register_tokens"), "features.register_tokens", 0, 64);
  c.pre_layernorm = j.at("pre_layernorm").get<bool>();
  c.layer_scale = j.at("layer_scale").get<bool>();
  c.patch_bias = j.at("patch_bias").get<bool>();
  c.position_grid = json_integer<int>(j.at("position_grid"), "features.position_grid", 0, 1024);
  c.position_resize = enum_named<PositionResize>(j.at("position_resize"), 3, resize_name, "position_resize");
  c.pooling = enum_named<Pooling>(j.at("pooling"), 4, model::pooling_name, "pooling");
  c.projection_dim = json_integer<int>(j.at("projection_dim"), "features.projection_dim", 0, 65536);
  const nlohmann::json& p = j.at("preprocessing");
  c.preprocessing.shortest_edge = p.at("shortest_edge").get<bool>();
  c.preprocessing.center_crop = p.at("center_crop").get<bool>();
  c.preprocessing.crop_size = json_integer<int>(p.at("crop_size"), "features.preprocessing.crop_size", 0, 4096);
  c.preprocessing.resample = json_integer<int>(p.at("resample"), "features.preprocessing.resample", 2, 3);
  c.preprocessing.mean = read_float3(p.at("mean"), "preprocessing.mean");
  c.preprocessing.std = read_float3(p.at("std"), "preprocessing.std");
}

}  // namespace tilevit::package
