#include "device/weight_values.hpp"

#include "device/sram.hpp"
#include "model/token_embedding.hpp"

namespace tilevit::device {
namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

WeightValues::WeightValues(const model::ViTWeights& weights, const compiler::Executable& package)
    : w_(weights), pkg_(package) {
  const auto& a = weights.config;
  const auto& b = package.config;
  if (a.width != b.width || a.mlp != b.mlp || a.heads != b.heads || a.patches() != b.patches() ||
      a.patch_dim() != b.patch_dim() || static_cast<int>(weights.layers.size()) < b.layers || a.family != b.family ||
      a.tokens() != b.tokens() || a.projection_dim != b.projection_dim || a.layer_scale != b.layer_scale ||
      a.pre_layernorm != b.pre_layernorm)
    throw Error("package was compiled for " + b.name + " (width " + std::to_string(b.width) + ", " +
                    std::to_string(b.layers) + " layers); the weights are " + a.name + " (width " +
                    std::to_string(a.width) + ", " + std::to_string(weights.layers.size()) + " layers)",
                kExitBadInput);
  if (b.class_token) token_addend_ = model::token_addend(weights);
}

WeightValues::Source WeightValues::source(const compiler::Tensor& t, std::uint32_t layer) const {
  const std::string& n = t.name;
  auto linear = [&](const model::Linear& l) -> Source {
    if (n.size() > 7 && n.compare(n.size() - 7, 7, ".weight") == 0) return Source{&l.weight, static_cast<std::uint32_t>(l.in), true, 0};
    return Source{&l.bias, static_cast<std::uint32_t>(l.out), false, 0};
  };
  auto norm = [&](const model::LayerNormParams& p) -> Source {
    return Source{n.size() > 6 && n.compare(n.size() - 6, 6, ".scale") == 0 ? &p.scale : &p.bias, 0, false, 0};
  };
  if (n == "embeddings.position")
    return Source{&w_.position, static_cast<std::uint32_t>(w_.config.width), false,
                  static_cast<std::uint32_t>(w_.config.patches())};
  if (n == "embeddings.token_addend")
    return Source{&token_addend_, static_cast<std::uint32_t>(w_.config.width), false,
                  static_cast<std::uint32_t>(w_.config.tokens())};
  if (starts_with(n, "embeddings.patch.")) return linear(w_.patch_embedding);
  if (starts_with(n, "pre_layernorm.")) return norm(w_.pre_ln);
  if (starts_with(n, "layer.")) {
    const auto& l = w_.layers.at(layer);
    if (starts_with(n, "layer.ln1.")) return norm(l.ln1);
    if (starts_with(n, "layer.ln2.")) return norm(l.ln2);
    if (starts_with(n, "layer.qkv.")) return linear(l.qkv);
    if (starts_with(n, "layer.out.")) return linear(l.out);
    if (starts_with(n, "layer.mlp.fc1.")) return linear(l.fc1);
    if (starts_with(n, "layer.mlp.fc2.")) return linear(l.fc2);
    if (n == "layer.ls1.scale") return Source{&l.ls1, 0, false, 0};
    if (n == "layer.ls2.scale") return Source{&l.ls2, 0, false, 0};
  }
  if (starts_with(n, "post_layernorm.")) return norm(w_.post_ln);
  if (n == "projection.weight") return linear(w_.projection);
  if (n == "head.probe") return Source{&w_.head.probe, 0, false, 0};
  if (starts_with(n, "head.q.")) return linear(w_.head.q);
  if (starts_with(n, "head.kv.")) return linear(w_.head.kv);
  if (starts_with(n, "head.out.")) return linear(w_.head.out);
  if (starts_with(n, "head.ln.")) return norm(w_.head.ln);
  if (starts_with(n, "head.mlp.fc1.")) return linear(w_.head.fc1);
  if (starts_with(n, "head.mlp.fc2.")) return linear(w_.head.fc2);
  throw Error("package: parameter tensor \"" + n + "\" has no counterpart in the model", kExitBadInput);
}

void WeightValues::write(const compiler::HostBinding& b, std::span<std::uint8_t> sram, std::uint32_t address,
                         const target::MachineDescription& machine) const {
  const compiler::Tensor& t = pkg_.tensors.at(b.tensor);
  const std::uint32_t es = compiler::dtype_bytes(t.dtype);
  const int scale = pkg_.numerics.role(t.role).scale;
  const auto fp8 = numerics::Fp8Format::F143;
  std::vector<float> row(b.cols);
  std::vector<std::uint16_t> halves(b.cols);
  for (std::uint32_t layer = 0; layer < b.layers; ++layer) {
    const Source s = source(t, pkg_.stage.first_layer + layer);  // a pipeline stage's loop starts there
    AccessContext ctx{b.tile, 0, "upload", "weight binding"};
    std::uint8_t* dst = sram_at(sram, machine, std::uint64_t(address) + b.offset + std::uint64_t(layer) * b.layer_stride,
                                std::uint64_t(b.rows) * b.cols * es, ctx);
    for (std::uint32_t r = 0; r < b.rows; ++r) {
      const std::uint32_t tr = b.row0 + r;
      const std::uint32_t sr = s.row_modulo ? tr % s.row_modulo : tr;
      for (std::uint32_t c = 0; c < b.cols; ++c) {
        const std::uint32_t tc = b.col0 + c;
        const std::size_t index = s.transposed ? std::size_t(tc) * s.ld + sr : std::size_t(sr) * s.ld + tc;
        if (index >= s.data->size()) throw Error("package: binding of " + t.name + " outside the model tensor", kExitBadInput);
        row[c] = (*s.data)[index];
      }
      std::uint8_t* out = dst + std::size_t(r) * b.cols * es;
      if (t.dtype == compiler::DType::f143) {
        numerics::fp8_encode(row.data(), out, b.cols, fp8, scale);
      } else if (t.dtype == compiler::DType::f16) {
        store_f16(out, row.data(), b.cols);
      } else {
        store_f32(out, row.data(), b.cols);
      }
    }
  }
}

}  // namespace tilevit::device
