#include "model/weights.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <string>

#include "model/checkpoint.hpp"
#include "model/position_resize.hpp"
#include "support/error.hpp"

namespace tilevit::model {
namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::ostringstream s;
  s << "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s << (i ? "," : "") << shape[i];
  s << "]";
  return s.str();
}

// Reads tensors by family-independent key (model/checkpoint.hpp), checking presence,
// shape and finiteness against the family's names.
class Reader {
 public:
  Reader(const TensorSource& source, const ViTConfig& config) : source_(source) {
    for (auto& t : checkpoint_tensors(config)) expected_[t.key] = t;
  }

  bool has(const std::string& key) const { return expected_.count(key) != 0; }

  std::vector<float> read(const std::string& key) const {
    const auto it = expected_.find(key);
    if (it == expected_.end()) throw Error("no checkpoint tensor for key " + key, kExitInternal);
    const std::string& name = it->second.name;
    const auto& expected = it->second.shape;
    const auto info = source_.info(name);
    if (!info) throw Error(source_.describe() + ": missing tensor " + name);
    if (info->shape != expected)
      throw Error(source_.describe() + ": tensor " + name + " has shape " + shape_text(info->shape) + ", expected " +
                  shape_text(expected));
    std::vector<float> data(static_cast<std::size_t>(info->elements()));
    source_.read_f32(name, data);
    for (std::size_t i = 0; i < data.size(); ++i)
      if (!std::isfinite(data[i]))
        throw Error(source_.describe() + ": tensor " + name + " element " + std::to_string(i) + " is " +
                    (std::isnan(data[i]) ? "NaN" : "infinite"));
    return data;
  }

  Linear linear(const std::string& key, int out, int in) const {
    return Linear{in, out, read(key + ".weight"), read(key + ".bias")};
  }
  LayerNormParams layer_norm(const std::string& key) const {
    return LayerNormParams{read(key + ".weight"), read(key + ".bias")};
  }

 private:
  const TensorSource& source_;
  std::map<std::string, CheckpointTensor> expected_;
};

void append(Linear& into, const Linear& part) {
  into.in = part.in;
  into.out += part.out;
  into.weight.insert(into.weight.end(), part.weight.begin(), part.weight.end());
  into.bias.insert(into.bias.end(), part.bias.begin(), part.bias.end());
}

// [width][channels][patch][patch] (the convolution's layout) -> [width][(y*patch + x)*channels + c].
std::vector<float> patch_rows_yxc(const std::vector<float>& conv, const ViTConfig& c) {
  std::vector<float> out(conv.size());
  const int p = c.patch, ch = c.channels;
  for (int o = 0; o < c.width; ++o)
    for (int k = 0; k < ch; ++k)
      for (int y = 0; y < p; ++y)
        for (int x = 0; x < p; ++x)
          out[(static_cast<std::size_t>(o) * p * p + y * p + x) * ch + k] =
              conv[((static_cast<std::size_t>(o) * ch + k) * p + y) * p + x];
  return out;
}

// The stored table resized to the image grid; the class token's row is kept as is.
std::vector<float> position_table(const Reader& r, const ViTConfig& c) {
  std::vector<float> table = r.read("position");
  if (c.table_grid() == c.grid()) return table;
  const std::size_t w = static_cast<std::size_t>(c.width), head = c.class_token ? w : 0;
  const std::vector<float> grid(table.begin() + static_cast<std::ptrdiff_t>(head), table.end());
  std::vector<float> out(table.begin(), table.begin() + static_cast<std::ptrdiff_t>(head));
  const auto resized = resize_position_grid(grid, c.table_grid(), c.grid(), c.width, c.position_resize);
  out.insert(out.end(), resized.begin(), resized.end());
  return out;
}

EncoderLayerWeights encoder_layer(const Reader& r, const ViTConfig& c, int i) {
  const int w = c.width, m = c.mlp;
  const std::string k = "layer." + std::to_string(i) + ".";
  EncoderLayerWeights layer;
  layer.ln1 = r.layer_norm(k + "ln1");
  for (const char* proj : {"q", "k", "v"}) append(layer.qkv, r.linear(k + proj, w, w));
  layer.out = r.linear(k + "out", w, w);
  layer.ln2 = r.layer_norm(k + "ln2");
  layer.fc1 = r.linear(k + "fc1", m, w);
  layer.fc2 = r.linear(k + "fc2", w, m);
  if (c.layer_scale) {
    layer.ls1 = r.read(k + "ls1");
    layer.ls2 = r.read(k + "ls2");
  }
  return layer;
}

MapHeadWeights map_head(const Reader& r, const ViTConfig& c) {
  const int w = c.width, m = c.mlp;
  MapHeadWeights head;
  head.probe = r.read("head.probe");
  const auto in_w = r.read("head.in_proj.weight");
  const auto in_b = r.read("head.in_proj.bias");
  const std::size_t ww = static_cast<std::size_t>(w) * w;
  head.q = Linear{w, w, {in_w.begin(), in_w.begin() + ww}, {in_b.begin(), in_b.begin() + w}};
  head.kv = Linear{w, 2 * w, {in_w.begin() + ww, in_w.end()}, {in_b.begin() + w, in_b.end()}};
  head.out = r.linear("head.out", w, w);
  head.ln = r.layer_norm("head.ln");
  head.fc1 = r.linear("head.fc1", m, w);
  head.fc2 = r.linear("head.fc2", w, m);
  return head;
}

}  // namespace

ViTWeights load_weights(const TensorSource& source, const ViTConfig& config, const WeightPart& part) {
  config.validate();
  const Reader r(source, config);
  const int w = config.width;
  const int end_layer = part.end_layer < 0 ? config.layers : std::min(part.end_layer, config.layers);
  ViTWeights weights;
  weights.config = config;
  if (part.embeds) {
    weights.patch_embedding = Linear{config.patch_dim(), w, patch_rows_yxc(r.read("patch.weight"), config),
                                     config.patch_bias ? r.read("patch.bias") : std::vector<float>(w, 0.0f)};
    if (config.class_token) weights.class_token = r.read("class_token");
    if (config.register_tokens) weights.registers = r.read("registers");
    weights.position = position_table(r, config);
    if (config.pre_layernorm) weights.pre_ln = r.layer_norm("pre_ln");
  }
  weights.layers.resize(static_cast<std::size_t>(config.layers));
  for (int i = std::max(part.first_layer, 0); i < end_layer; ++i)
    weights.layers[static_cast<std::size_t>(i)] = encoder_layer(r, config, i);
  if (part.pools) {
    weights.post_ln = r.layer_norm("post_ln");
    if (config.family == Family::siglip) weights.head = map_head(r, config);
    if (config.projection_dim)
      weights.projection = Linear{w, config.projection_dim, r.read("projection.weight"), {}};
  }
  return weights;
}

std::vector<std::string> presets_matching(const TensorSource& source, int layers) {
  std::vector<std::string> matching;
  const std::string names = ViTConfig::preset_names();
  for (std::size_t at = 0; at < names.size();) {
    const std::size_t end = std::min(names.find(", ", at), names.size());
    const std::string name = names.substr(at, end - at);
    at = end + 2;
    ViTConfig config;
    try {
      config = ViTConfig::preset(name);
    } catch (const Error&) {
      continue;  // a preset not supported yet
    }
    config.layers = std::max(1, std::min(layers, config.max_layers));
    const auto tensors = checkpoint_tensors(config);
    if (std::all_of(tensors.begin(), tensors.end(), [&](const CheckpointTensor& t) {
          const auto info = source.info(t.name);
          return info && info->shape == t.shape;
        }))
      matching.push_back(name);
  }
  return matching;
}

}  // namespace tilevit::model
