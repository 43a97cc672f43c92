// FP32 reference: batched dense GEMMs through oneDNN's sgemm (row-major), attention
// per image and head, exact formulas of modeling_siglip in float.
#include <dnnl.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "model/patches.hpp"
#include "reference/forward.hpp"
#include "reference/fp32_math.hpp"
#include "support/error.hpp"

namespace tilevit::reference {
namespace {

using model::Linear;

// C[m][n] (+)= A[m][k] . B^T where B is [n][k] (a checkpoint [out][in] weight), or B is [k][n].
void sgemm(bool transpose_b, int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
           int ldc, bool accumulate = false) {
  if (m == 0 || n == 0) return;
  const dnnl_status_t status =
      dnnl_sgemm('N', transpose_b ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, accumulate ? 1.0f : 0.0f, c, ldc);
  if (status != dnnl_success) throw Error("oneDNN sgemm failed with status " + std::to_string(status), kExitInternal);
}

// y = x W^T + b, or y += x W^T + b (residual connections, without a temporary).
void linear_into(const Linear& l, const float* x, int rows, std::vector<float>& y, bool accumulate) {
  if (!accumulate) y.resize(static_cast<std::size_t>(rows) * l.out);
  sgemm(true, rows, l.out, l.in, x, l.in, l.weight.data(), l.in, y.data(), l.out, accumulate);
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; ++r)
    for (int o = 0; o < l.out; ++o) y[static_cast<std::size_t>(r) * l.out + o] += l.bias[o];
}

std::vector<float> linear(const Linear& l, const float* x, int rows) {
  std::vector<float> y;
  linear_into(l, x, rows, y, false);
  return y;
}

void layer_norm_into(const model::LayerNormParams& p, const std::vector<float>& x, int rows, int width, float eps,
                     std::vector<float>& y) {
  y.resize(x.size());
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; ++r) {
    const float* in = x.data() + static_cast<std::size_t>(r) * width;
    float* out = y.data() + static_cast<std::size_t>(r) * width;
    double sum = 0;
    for (int i = 0; i < width; ++i) sum += in[i];
    const double mean = sum / width;
    double sq = 0;
    for (int i = 0; i < width; ++i) sq += (in[i] - mean) * (in[i] - mean);
    const float rstd = static_cast<float>(1.0 / std::sqrt(sq / width + eps));
    for (int i = 0; i < width; ++i)
      out[i] = static_cast<float>(in[i] - mean) * rstd * p.scale[i] + p.bias[i];
  }
}

std::vector<float> layer_norm(const model::LayerNormParams& p, const std::vector<float>& x, int rows, int width,
                              float eps) {
  std::vector<float> y;
  layer_norm_into(p, x, rows, width, eps, y);
  return y;
}

void gelu_tanh(std::vector<float>& x) {
  const std::int64_t n = static_cast<std::int64_t>(x.size()), chunk = 4096;
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; i += chunk) gelu_tanh_fp32(x.data() + i, static_cast<std::size_t>(std::min(chunk, n - i)));
}

// Multi-head attention of `queries` rows of q (row stride ldq) against `tokens` rows of k
// and v (row stride ldkv); writes [queries][width] into out.
void attention(const model::ViTConfig& c, int queries, const float* q, int ldq, int tokens, const float* k,
               const float* v, int ldkv, float* out) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  // Heads in parallel, each head's skinny GEMMs on one thread (oneDNN runs sequentially
  // inside a parallel region): better cache use than splitting every small GEMM.
  static thread_local std::vector<float> scores;
#pragma omp parallel for schedule(dynamic, 1)
  for (int h = 0; h < c.heads; ++h) {
    scores.resize(static_cast<std::size_t>(queries) * tokens);
    const int off = h * c.head_dim;
    sgemm(true, queries, tokens, c.head_dim, q + off, ldq, k + off, ldkv, scores.data(), tokens);
    for (int r = 0; r < queries; ++r) softmax_fp32(scores.data() + static_cast<std::size_t>(r) * tokens, tokens, scale);
    sgemm(false, queries, c.head_dim, tokens, scores.data(), tokens, v + off, ldkv, out + off, c.width);
  }
}

// x <- activation(x) (the config's: tanh GELU, exact GELU or quick_gelu).
void activate(model::Activation kind, std::vector<float>& x) {
  if (kind == model::Activation::gelu_tanh) return gelu_tanh(x);
  const std::int64_t n = static_cast<std::int64_t>(x.size());
  float* v = x.data();
  if (kind == model::Activation::gelu_erf) {
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) v[i] = 0.5f * v[i] * (1.0f + std::erf(v[i] * 0.70710678118654752f));
  } else {  // quick_gelu: x sigmoid(1.702 x)
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) v[i] = v[i] / (1.0f + std::exp(-1.702f * v[i]));
  }
}

// x += branch, or x += gamma * branch with a LayerScale gamma [width].
void add_scaled(std::vector<float>& x, const std::vector<float>& branch, const std::vector<float>& gamma) {
  const std::size_t w = gamma.size(), n = x.size();
  for (std::size_t i = 0; i < n; ++i) x[i] += gamma[i % w] * branch[i];
}

// x += [gamma *] l(h): straight into x without LayerScale (no temporary), else via `tmp`.
void linear_residual(const Linear& l, const std::vector<float>& h, int rows, const std::vector<float>& gamma,
                     std::vector<float>& x, std::vector<float>& tmp) {
  if (gamma.empty()) return linear_into(l, h.data(), rows, x, true);
  linear_into(l, h.data(), rows, tmp, false);
  add_scaled(x, tmp, gamma);
}

// x += [gamma *] fc2(act(fc1(h))), with `u` as the hidden buffer (reused across layers).
void mlp_residual(const Linear& fc1, const Linear& fc2, model::Activation act, std::vector<float>& x,
                  const std::vector<float>& h, int rows, std::vector<float>& u, const std::vector<float>& gamma = {}) {
  linear_into(fc1, h.data(), rows, u, false);
  activate(act, u);
  std::vector<float> tmp;
  linear_residual(fc2, u, rows, gamma, x, tmp);
}

// Token rows of every image: [class token + position 0] [registers] [patch + position],
// batch-major, [batch * tokens][width].
std::vector<float> embed(const model::ViTWeights& weights, const ImageBatch& images) {
  const model::ViTConfig& c = weights.config;
  const int batch = static_cast<int>(images.size());
  const int p = c.patches(), t = c.tokens(), w = c.width, cls = c.class_token ? 1 : 0;
  std::vector<float> patches(static_cast<std::size_t>(batch) * p * c.patch_dim());
  for (int b = 0; b < batch; ++b) {
    const auto rows = model::patch_rows(c, images[b]);
    std::memcpy(patches.data() + static_cast<std::size_t>(b) * rows.size(), rows.data(), rows.size() * sizeof(float));
  }
  const std::vector<float> e = linear(weights.patch_embedding, patches.data(), batch * p);
  if (t == p) {  // SigLIP: the tokens are the patches
    std::vector<float> x = e;
    for (int r = 0; r < batch * p; ++r)
      for (int i = 0; i < w; ++i) x[static_cast<std::size_t>(r) * w + i] += weights.position[static_cast<std::size_t>(r % p) * w + i];
    return x;
  }
  std::vector<float> x(static_cast<std::size_t>(batch) * t * w);
  auto row = [&](int b, int token) { return x.data() + (static_cast<std::size_t>(b) * t + token) * w; };
  for (int b = 0; b < batch; ++b) {
    if (cls)
      for (int i = 0; i < w; ++i) row(b, 0)[i] = weights.class_token[i] + weights.position[i];
    std::memcpy(row(b, cls), weights.registers.data(), weights.registers.size() * sizeof(float));
    for (int j = 0; j < p; ++j)
      for (int i = 0; i < w; ++i)
        row(b, cls + c.register_tokens + j)[i] = e[(static_cast<std::size_t>(b) * p + j) * w + i] +
                                                 weights.position[static_cast<std::size_t>(cls + j) * w + i];
  }
  return x;
}

// SigLIP's MAP head: one learned query attends over each image's tokens.
std::vector<float> map_head(const model::ViTWeights& weights, const std::vector<float>& x, int batch) {
  const model::ViTConfig& c = weights.config;
  const int t = c.tokens(), w = c.width, rows = batch * t;
  const auto& head = weights.head;
  const auto q = linear(head.q, head.probe.data(), 1);
  const auto kv = linear(head.kv, x.data(), rows);
  std::vector<float> pooled(static_cast<std::size_t>(batch) * w), u;
  for (int b = 0; b < batch; ++b) {
    const float* base = kv.data() + static_cast<std::size_t>(b) * t * 2 * w;
    attention(c, 1, q.data(), w, t, base, base + w, 2 * w, pooled.data() + static_cast<std::size_t>(b) * w);
  }
  std::vector<float> y = linear(head.out, pooled.data(), batch);
  mlp_residual(head.fc1, head.fc2, c.activation, y, layer_norm(head.ln, y, batch, w, c.layer_norm_eps), batch, u);
  return y;
}

// The class token of each image after the final LayerNorm, then CLIP's projection.
std::vector<float> class_token_output(const model::ViTWeights& weights, const std::vector<float>& x, int batch) {
  const model::ViTConfig& c = weights.config;
  const std::size_t w = static_cast<std::size_t>(c.width);
  std::vector<float> first(batch * w);
  for (int b = 0; b < batch; ++b)
    std::memcpy(first.data() + b * w, x.data() + static_cast<std::size_t>(b) * c.tokens() * w, w * sizeof(float));
  std::vector<float> y = layer_norm(weights.post_ln, first, batch, c.width, c.layer_norm_eps);
  if (c.projection_dim == 0) return y;
  std::vector<float> projected(static_cast<std::size_t>(batch) * c.projection_dim);
  sgemm(true, batch, c.projection_dim, c.width, y.data(), c.width, weights.projection.weight.data(), c.width,
        projected.data(), c.projection_dim);
  return projected;
}

}  // namespace

std::vector<float> forward_fp32(const model::ViTWeights& weights, const ImageBatch& images) {
  const model::ViTConfig& c = weights.config;
  const int batch = static_cast<int>(images.size());
  const int t = c.tokens(), w = c.width, rows = batch * t;
  const float eps = c.layer_norm_eps;

  std::vector<float> x = embed(weights, images);
  if (c.pre_layernorm) x = layer_norm(weights.pre_ln, x, rows, w, eps);

  // Buffers live across layers: fresh multi-megabyte allocations cost page faults.
  std::vector<float> attn(static_cast<std::size_t>(rows) * w), h, qkv, u, tmp;
  for (const auto& layer : weights.layers) {
    layer_norm_into(layer.ln1, x, rows, w, eps, h);
    linear_into(layer.qkv, h.data(), rows, qkv, false);
    for (int b = 0; b < batch; ++b) {
      const float* base = qkv.data() + static_cast<std::size_t>(b) * t * 3 * w;
      attention(c, t, base, 3 * w, t, base + w, base + 2 * w, 3 * w, attn.data() + static_cast<std::size_t>(b) * t * w);
    }
    linear_residual(layer.out, attn, rows, layer.ls1, x, tmp);
    layer_norm_into(layer.ln2, x, rows, w, eps, h);
    mlp_residual(layer.fc1, layer.fc2, c.activation, x, h, rows, u, layer.ls2);
  }
  switch (c.pooling) {
    case model::Pooling::hidden_state: return x;
    case model::Pooling::tokens:  // CLIP's post_layernorm is applied to the pooled token only
      return c.family == model::Family::clip ? x : layer_norm(weights.post_ln, x, rows, w, eps);
    case model::Pooling::class_token: return class_token_output(weights, x, batch);
    case model::Pooling::map_head: break;
  }
  return map_head(weights, layer_norm(weights.post_ln, x, rows, w, eps), batch);
}

}  // namespace tilevit::reference
