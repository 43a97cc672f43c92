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

// x += fc2(gelu(fc1(h))), with `u` as the hidden buffer (reused across layers).
void mlp_residual(const Linear& fc1, const Linear& fc2, std::vector<float>& x, const std::vector<float>& h, int rows,
                  std::vector<float>& u) {
  linear_into(fc1, h.data(), rows, u, false);
  gelu_tanh(u);
  linear_into(fc2, u.data(), rows, x, true);
}

}  // namespace

std::vector<float> forward_fp32(const model::ViTWeights& weights, const ImageBatch& images) {
  const model::ViTConfig& c = weights.config;
  const int batch = static_cast<int>(images.size());
  const int t = c.patches(), w = c.width, rows = batch * t;
  const float eps = c.layer_norm_eps;

  std::vector<float> patches(static_cast<std::size_t>(rows) * c.patch_dim());
  for (int b = 0; b < batch; ++b) {
    const auto p = model::patch_rows(c, images[b]);
    std::memcpy(patches.data() + static_cast<std::size_t>(b) * p.size(), p.data(), p.size() * sizeof(float));
  }
  std::vector<float> x = linear(weights.patch_embedding, patches.data(), rows);
  for (int r = 0; r < rows; ++r)
    for (int i = 0; i < w; ++i) x[static_cast<std::size_t>(r) * w + i] += weights.position[static_cast<std::size_t>(r % t) * w + i];

  // Buffers live across layers: fresh multi-megabyte allocations cost page faults.
  std::vector<float> attn(static_cast<std::size_t>(rows) * w), h, qkv, u;
  for (const auto& layer : weights.layers) {
    layer_norm_into(layer.ln1, x, rows, w, eps, h);
    linear_into(layer.qkv, h.data(), rows, qkv, false);
    for (int b = 0; b < batch; ++b) {
      const float* base = qkv.data() + static_cast<std::size_t>(b) * t * 3 * w;
      attention(c, t, base, 3 * w, t, base + w, base + 2 * w, 3 * w, attn.data() + static_cast<std::size_t>(b) * t * w);
    }
    linear_into(layer.out, attn.data(), rows, x, true);
    layer_norm_into(layer.ln2, x, rows, w, eps, h);
    mlp_residual(layer.fc1, layer.fc2, x, h, rows, u);
  }
  x = layer_norm(weights.post_ln, x, rows, w, eps);

  // MAP head: one learned query attends over each image's tokens.
  const auto& head = weights.head;
  const auto q = linear(head.q, head.probe.data(), 1);
  const auto kv = linear(head.kv, x.data(), rows);
  std::vector<float> pooled(static_cast<std::size_t>(batch) * w);
  for (int b = 0; b < batch; ++b) {
    const float* base = kv.data() + static_cast<std::size_t>(b) * t * 2 * w;
    attention(c, 1, q.data(), w, t, base, base + w, 2 * w, pooled.data() + static_cast<std::size_t>(b) * w);
  }
  std::vector<float> y = linear(head.out, pooled.data(), batch);
  mlp_residual(head.fc1, head.fc2, y, layer_norm(head.ln, y, batch, w, eps), batch, u);
  return y;
}

}  // namespace tilevit::reference
