// Device-numerics reference: the graph of forward_fp32 with the device's rounding at
// every step (docs/NUMERICS.md), computed by the kernels in numerics/device_kernels.
#include <cmath>
#include <cstring>

#include "model/token_embedding.hpp"
#include "numerics/device_kernels.hpp"
#include "numerics/fp16.hpp"
#include "numerics/fp8.hpp"
#include "reference/forward.hpp"
#include "support/error.hpp"

namespace tilevit::reference {

using model::GemmRole;
using numerics::round_fp16;

// A linear layer as the device holds it: weights quantised and transposed to
// [in][out] (the kernels' B operand), bias rounded to FP16.
struct DeviceLinear {
  int in = 0, out = 0;
  model::RolePrecision precision;
  std::uint32_t inner_block = 0;
  std::vector<float> weight_t;
  std::vector<float> bias;
};

struct DeviceLayerNorm {
  std::vector<float> scale, bias;
};

struct DeviceLayer {
  DeviceLayerNorm ln1, ln2;
  DeviceLinear qkv, out, fc1, fc2;
  std::vector<float> ls1, ls2;  // LayerScale, FP16; empty without it
};

struct DeviceWeights {
  DeviceLinear patch_embedding;   // without bias when the model has a class token (it is in the addend)
  std::vector<float> position;    // SigLIP: the position table; with a class token: model::token_addend
  DeviceLayerNorm pre_ln;
  DeviceLinear projection;        // CLIP's visual projection, no bias
  std::vector<DeviceLayer> layers;
  DeviceLayerNorm post_ln;
  std::vector<float> probe;
  DeviceLinear q, kv, out, fc1, fc2;
  DeviceLayerNorm head_ln;
};

namespace {

std::vector<float> fp16_copy(std::vector<float> v) {
  round_fp16(v.data(), v.size());
  return v;
}

// Operand quantisation of a role: FP8 F143 at the role's scale, or FP16.
void quantise(std::vector<float>& v, const model::RolePrecision& p) {
  if (p.fp8)
    numerics::fp8_round(v.data(), v.size(), numerics::Fp8Format::F143, p.scale);
  else
    round_fp16(v.data(), v.size());
}

DeviceLinear device_linear(const model::Linear& l, const model::RolePrecision& p, std::uint32_t inner_block) {
  DeviceLinear d{l.in, l.out, p, inner_block, std::vector<float>(l.weight.size()), fp16_copy(l.bias)};
#pragma omp parallel for schedule(static)
  for (int o = 0; o < l.out; ++o)
    for (int i = 0; i < l.in; ++i)
      d.weight_t[static_cast<std::size_t>(i) * l.out + o] = l.weight[static_cast<std::size_t>(o) * l.in + i];
  quantise(d.weight_t, p);
  return d;
}

DeviceLayerNorm device_layer_norm(const model::LayerNormParams& p) {
  return DeviceLayerNorm{fp16_copy(p.scale), fp16_copy(p.bias)};
}

// y = fp16(gemm(quantise(x)) + bias): the cast kernel, the matrix-unit GEMM (FP16
// accumulator per K32 panel for FP8; FP32 accumulation for FP16), then the bias add
// (none for a linear without bias).
std::vector<float> run_linear(const DeviceLinear& l, std::vector<float> x, int rows) {
  quantise(x, l.precision);
  std::vector<float> y(static_cast<std::size_t>(rows) * l.out);
  const int block = (l.inner_block > 0 && static_cast<int>(l.inner_block) < l.in) ? static_cast<int>(l.inner_block) : l.in;
  const int blocks = (l.in + block - 1) / block;
  // One partial per inner block (as one tile computes it), then the reduction kernel.
  std::vector<float> partials(blocks > 1 ? y.size() * blocks : 0);
  for (int b = 0; b < blocks; ++b) {
    const int k0 = b * block, kw = std::min(block, l.in - k0);
    numerics::DeviceGemm g;
    g.rows = rows;
    g.columns = l.out;
    g.inner = kw;
    g.a = x.data() + k0;
    g.lda = l.in;
    g.b = l.weight_t.data() + static_cast<std::size_t>(k0) * l.out;
    g.ldb = l.out;
    g.c = blocks > 1 ? partials.data() + static_cast<std::size_t>(b) * y.size() : y.data();
    g.ldc = l.out;
    g.panel = l.precision.fp8 ? 32 : 0;
    g.round_output = true;
    numerics::device_gemm(g);
  }
  if (blocks > 1) numerics::device_reduce_add(partials.data(), blocks, y.size(), y.data());
  if (l.bias.empty()) return y;
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; ++r) {
    float* row = y.data() + static_cast<std::size_t>(r) * l.out;
    numerics::device_add(row, l.bias.data(), row, static_cast<std::size_t>(l.out));
  }
  return y;
}

// With part_width > 0 each row's moments are taken in column parts and combined in part
// order, as the compiler's split LayerNorm does (docs/NUMERICS.md).
std::vector<float> run_layer_norm(const DeviceLayerNorm& p, const std::vector<float>& x, int rows, int width,
                                  float eps, std::uint32_t part_width = 0) {
  std::vector<float> y(x.size());
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; ++r) {
    const float* in = x.data() + static_cast<std::size_t>(r) * width;
    float* out = y.data() + static_cast<std::size_t>(r) * width;
    if (part_width == 0) numerics::device_layernorm_row(in, p.scale.data(), p.bias.data(), out, width, eps);
    else numerics::device_layernorm_split_row(in, p.scale.data(), p.bias.data(), out, width, static_cast<int>(part_width), eps);
  }
  return y;
}

void residual_add(std::vector<float>& x, const std::vector<float>& y) {
  const std::int64_t n = static_cast<std::int64_t>(x.size());
  const std::int64_t chunk = 4096;
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; i += chunk)
    numerics::device_add(x.data() + i, y.data() + i, x.data() + i, static_cast<std::size_t>(std::min(chunk, n - i)));
}

// Attention, FP16 or with FP8 products (`precision`), one (image, head) per task, in key blocks of `key_block` keys (all
// keys if 0): scores and row maxima per block, the global maximum, exponentials, partial
// sums and P.V per block, then the blocks combined in order (docs/NUMERICS.md).
void attention(const model::ViTConfig& c, int batch, int queries, const float* q, int ldq, std::size_t q_image_stride,
               int tokens, const float* k, const float* v, int ldkv, std::size_t kv_image_stride, float* out,
               std::size_t out_image_stride, std::uint32_t key_block, numerics::AttentionPrecision precision = {}) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  const int d = c.head_dim;
  const int block = (key_block > 0 && static_cast<int>(key_block) < tokens) ? static_cast<int>(key_block) : tokens;
  const int blocks = (tokens + block - 1) / block;
#pragma omp parallel for schedule(dynamic) collapse(2)
  for (int b = 0; b < batch; ++b) {
    for (int h = 0; h < c.heads; ++h) {
      const float* qh = q + b * q_image_stride + h * d;
      const float* kh = k + b * kv_image_stride + h * d;
      const float* vh = v + b * kv_image_stride + h * d;
      std::vector<float> scores(static_cast<std::size_t>(queries) * tokens);
      std::vector<float> maxima(static_cast<std::size_t>(blocks) * queries), row_max(queries, -INFINITY);
      std::vector<float> partials(static_cast<std::size_t>(blocks) * queries * (d + 1));
      for (int kb = 0; kb < blocks; ++kb) {
        const int j0 = kb * block, n = std::min(block, tokens - j0);
        numerics::device_attention_scores(qh, ldq, kh + static_cast<std::size_t>(j0) * ldkv, ldkv, queries, n, d, scale,
                                          scores.data() + static_cast<std::size_t>(j0) * queries,
                                          maxima.data() + static_cast<std::size_t>(kb) * queries, precision);
      }
      for (int kb = 0; kb < blocks; ++kb)
        for (int i = 0; i < queries; ++i) row_max[i] = std::max(row_max[i], maxima[static_cast<std::size_t>(kb) * queries + i]);
      for (int kb = 0; kb < blocks; ++kb) {
        const int j0 = kb * block, n = std::min(block, tokens - j0);
        float* block_scores = scores.data() + static_cast<std::size_t>(j0) * queries;
        numerics::device_attention_values(block_scores, block_scores, row_max.data(), queries, n, vh + static_cast<std::size_t>(j0) * ldkv, ldkv, d,
                                          partials.data() + static_cast<std::size_t>(kb) * queries * (d + 1), precision);
      }
      numerics::device_attention_combine(partials.data(), blocks, queries, d, out + b * out_image_stride + h * d, c.width);
    }
  }
}

void activate(model::Activation a, std::vector<float>& u) {
  switch (a) {
    case model::Activation::gelu_tanh: numerics::device_gelu(u.data(), u.data(), u.size()); return;
    case model::Activation::gelu_erf: numerics::device_gelu_erf(u.data(), u.data(), u.size()); return;
    case model::Activation::quick_gelu: numerics::device_quick_gelu(u.data(), u.data(), u.size()); return;
  }
}

std::vector<float> mlp(const DeviceLinear& fc1, const DeviceLinear& fc2, model::Activation a, const std::vector<float>& h,
                       int rows) {
  auto u = run_linear(fc1, h, rows);
  activate(a, u);
  return run_linear(fc2, std::move(u), rows);
}

// The scale_columns kernel: every row times the LayerScale (nothing without one).
std::vector<float> layer_scale(const std::vector<float>& gamma, std::vector<float> y) {
  const std::size_t w = gamma.size();
  for (std::size_t r = 0; w > 0 && r < y.size() / w; ++r) numerics::device_multiply(y.data() + r * w, gamma.data(), y.data() + r * w, w);
  return y;
}

// Rows 0, stride, 2 x stride, ...: each image's class token.
std::vector<float> take_rows(const std::vector<float>& x, int count, int stride, int width) {
  std::vector<float> out(static_cast<std::size_t>(count) * width);
  for (int i = 0; i < count; ++i)
    std::memcpy(out.data() + static_cast<std::size_t>(i) * width, x.data() + static_cast<std::size_t>(i) * stride * width,
                static_cast<std::size_t>(width) * sizeof(float));
  return out;
}

}  // namespace

DeviceNumericsModel::DeviceNumericsModel(const model::ViTWeights& w, const model::NumericsConfig& numerics)
    : DeviceNumericsModel(w, numerics, std::vector<model::NumericsConfig>(w.layers.size(), numerics)) {}

DeviceNumericsModel::DeviceNumericsModel(const model::ViTWeights& w, const model::NumericsConfig& numerics,
                                         std::vector<model::NumericsConfig> layer_numerics)
    : config_(w.config), numerics_(numerics), layer_numerics_(std::move(layer_numerics)), weights_(nullptr) {
  if (layer_numerics_.size() != w.layers.size())
    throw Error("device numerics: " + std::to_string(layer_numerics_.size()) + " layers' splits for " +
                    std::to_string(w.layers.size()) + " layers",
                kExitInternal);
  weights_ = new DeviceWeights;
  DeviceWeights& d = *weights_;
  auto device_linear = [&](const model::Linear& l, GemmRole r) {
    return reference::device_linear(l, numerics.role(r), numerics.role_inner_block(r));
  };
  d.patch_embedding = device_linear(w.patch_embedding, GemmRole::Embedding);
  d.position = fp16_copy(w.position);
  if (config_.class_token) {  // the patch bias is in the addend (compiler/graph.hpp)
    d.patch_embedding.bias.clear();
    d.position = fp16_copy(model::token_addend(w));
  }
  if (config_.pre_layernorm) d.pre_ln = device_layer_norm(w.pre_ln);
  if (config_.projection_dim) d.projection = device_linear(w.projection, GemmRole::Projection);
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    const auto& layer = w.layers[i];
    auto layer_linear = [&](const model::Linear& l, GemmRole r) {
      return reference::device_linear(l, numerics.role(r), layer_numerics_[i].role_inner_block(r));
    };
    d.layers.push_back(DeviceLayer{device_layer_norm(layer.ln1), device_layer_norm(layer.ln2),
                                   layer_linear(layer.qkv, GemmRole::Qkv), layer_linear(layer.out, GemmRole::AttentionOut),
                                   layer_linear(layer.fc1, GemmRole::MlpUp), layer_linear(layer.fc2, GemmRole::MlpDown),
                                   fp16_copy(layer.ls1), fp16_copy(layer.ls2)});
  }
  d.post_ln = device_layer_norm(w.post_ln);
  if (config_.family != model::Family::siglip) return;  // the MAP head is SigLIP's
  d.probe = fp16_copy(w.head.probe);
  d.q = device_linear(w.head.q, GemmRole::MapQuery);
  d.kv = device_linear(w.head.kv, GemmRole::MapKv);
  d.out = device_linear(w.head.out, GemmRole::MapOut);
  d.head_ln = device_layer_norm(w.head.ln);
  d.fc1 = device_linear(w.head.fc1, GemmRole::MapMlpUp);
  d.fc2 = device_linear(w.head.fc2, GemmRole::MapMlpDown);
}

DeviceNumericsModel::~DeviceNumericsModel() { delete weights_; }

std::vector<float> DeviceNumericsModel::forward(const ImageBatch& images) const {
  const model::ViTConfig& c = config_;
  const DeviceWeights& dw = *weights_;
  const int batch = static_cast<int>(images.size());
  const int t = c.tokens(), w = c.width, rows = batch * t;
  const float eps = c.layer_norm_eps;
  const std::size_t tw = static_cast<std::size_t>(t) * w;

  // The image is uploaded in FP16, a zero row per class or register token.
  std::vector<float> patches(static_cast<std::size_t>(rows) * c.patch_dim());
  for (int b = 0; b < batch; ++b) {
    const auto p = model::token_input_rows(c, images[b]);
    std::memcpy(patches.data() + static_cast<std::size_t>(b) * p.size(), p.data(), p.size() * sizeof(float));
  }
  round_fp16(patches.data(), patches.size());
  std::vector<float> x = run_linear(dw.patch_embedding, std::move(patches), rows);
  for (int b = 0; b < batch; ++b) numerics::device_add(x.data() + b * tw, dw.position.data(), x.data() + b * tw, tw);
  if (c.pre_layernorm) x = run_layer_norm(dw.pre_ln, x, rows, w, eps);

  std::vector<float> attn(static_cast<std::size_t>(rows) * w);
  for (std::size_t i = 0; i < dw.layers.size(); ++i) {
    const DeviceLayer& layer = dw.layers[i];
    const model::NumericsConfig& n = layer_numerics_[i];
    auto qkv = run_linear(layer.qkv, run_layer_norm(layer.ln1, x, rows, w, eps, n.encoder_norm_part[0]), rows);
    // FP8 attention products: the QKV epilogue's cast of Q, K and V to F143.
    if (n.attention_fp8) numerics::fp8_round(qkv.data(), qkv.size(), numerics::Fp8Format::F143, n.attention_scale);
    attention(c, batch, t, qkv.data(), 3 * w, 3 * tw, t, qkv.data() + w, qkv.data() + 2 * w, 3 * w, 3 * tw,
              attn.data(), tw, n.attention_key_block, numerics::AttentionPrecision{n.attention_fp8});
    residual_add(x, layer_scale(layer.ls1, run_linear(layer.out, attn, rows)));
    residual_add(x, layer_scale(layer.ls2, mlp(layer.fc1, layer.fc2, c.activation, run_layer_norm(layer.ln2, x, rows, w, eps, n.encoder_norm_part[1]), rows)));
  }
  switch (c.pooling) {
    case model::Pooling::hidden_state: return x;
    case model::Pooling::tokens:  // CLIP's post_layernorm touches only the pooled token
      return c.family == model::Family::clip ? x : run_layer_norm(dw.post_ln, x, rows, w, eps);
    case model::Pooling::class_token: {
      const auto y = run_layer_norm(dw.post_ln, take_rows(x, batch, t, w), batch, w, eps);
      return c.projection_dim ? run_linear(dw.projection, y, batch) : y;
    }
    case model::Pooling::map_head: break;
  }
  x = run_layer_norm(dw.post_ln, x, rows, w, eps);

  const auto q = run_linear(dw.q, dw.probe, 1);
  const auto kv = run_linear(dw.kv, x, rows);
  std::vector<float> pooled(static_cast<std::size_t>(batch) * w);
  attention(c, batch, 1, q.data(), w, 0, t, kv.data(), kv.data() + w, 2 * w, 2 * tw, pooled.data(), w,
            numerics_.map_attention_key_block);
  std::vector<float> y = run_linear(dw.out, std::move(pooled), batch);
  residual_add(y, mlp(dw.fc1, dw.fc2, c.activation, run_layer_norm(dw.head_ln, y, batch, w, eps), batch));
  return y;
}

}  // namespace tilevit::reference
