#include "model/weights.hpp"

#include <cmath>
#include <map>
#include <sstream>
#include <string>

#include "model/checkpoint.hpp"
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

class Reader {
 public:
  Reader(const TensorSource& source, const ViTConfig& config) : source_(source) {
    for (auto& t : checkpoint_tensors(config)) expected_[t.name] = t.shape;
  }

  // Reads `name` (without prefix), checking shape and finiteness.
  std::vector<float> read(const std::string& short_name) const {
    const std::string name = kVisionPrefix + short_name;
    const auto& expected = expected_.at(name);
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

  Linear linear(const std::string& name, int out, int in) const {
    return Linear{in, out, read(name + ".weight"), read(name + ".bias")};
  }
  LayerNormParams layer_norm(const std::string& name) const {
    return LayerNormParams{read(name + ".weight"), read(name + ".bias")};
  }

 private:
  const TensorSource& source_;
  std::map<std::string, std::vector<std::int64_t>> expected_;
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

}  // namespace

ViTWeights load_weights(const TensorSource& source, const ViTConfig& config) {
  config.validate();
  const Reader r(source, config);
  const int w = config.width, m = config.mlp;
  ViTWeights weights;
  weights.config = config;
  weights.patch_embedding = Linear{config.patch_dim(), w,
                                   patch_rows_yxc(r.read("embeddings.patch_embedding.weight"), config),
                                   r.read("embeddings.patch_embedding.bias")};
  weights.position = r.read("embeddings.position_embedding.weight");
  for (int i = 0; i < config.layers; ++i) {
    const std::string p = "encoder.layers." + std::to_string(i) + ".";
    EncoderLayerWeights layer;
    layer.ln1 = r.layer_norm(p + "layer_norm1");
    for (const char* proj : {"q_proj", "k_proj", "v_proj"}) append(layer.qkv, r.linear(p + "self_attn." + proj, w, w));
    layer.out = r.linear(p + "self_attn.out_proj", w, w);
    layer.ln2 = r.layer_norm(p + "layer_norm2");
    layer.fc1 = r.linear(p + "mlp.fc1", m, w);
    layer.fc2 = r.linear(p + "mlp.fc2", w, m);
    weights.layers.push_back(std::move(layer));
  }
  weights.post_ln = r.layer_norm("post_layernorm");
  MapHeadWeights& head = weights.head;
  head.probe = r.read("head.probe");
  const auto in_w = r.read("head.attention.in_proj_weight");
  const auto in_b = r.read("head.attention.in_proj_bias");
  const std::size_t ww = static_cast<std::size_t>(w) * w;
  head.q = Linear{w, w, {in_w.begin(), in_w.begin() + ww}, {in_b.begin(), in_b.begin() + w}};
  head.kv = Linear{w, 2 * w, {in_w.begin() + ww, in_w.end()}, {in_b.begin() + w, in_b.end()}};
  head.out = r.linear("head.attention.out_proj", w, w);
  head.ln = r.layer_norm("head.layernorm");
  head.fc1 = r.linear("head.mlp.fc1", m, w);
  head.fc2 = r.linear("head.mlp.fc2", w, m);
  return weights;
}

}  // namespace tilevit::model
