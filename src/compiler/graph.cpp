#include "compiler/graph.hpp"

#include "support/error.hpp"

namespace tilevit::compiler {

std::uint32_t dtype_bytes(DType dtype) { return dtype == DType::f143 ? 1 : dtype == DType::f16 ? 2 : 4; }
const char* dtype_name(DType dtype) { return dtype == DType::f143 ? "F143" : dtype == DType::f16 ? "F16" : "F32"; }

const char* op_name(OpKind kind) {
  switch (kind) {
    case OpKind::cast_fp8: return "cast_fp8";
    case OpKind::gemm: return "gemm";
    case OpKind::bias_add: return "bias_add";
    case OpKind::add: return "add";
    case OpKind::layernorm: return "layernorm";
    case OpKind::gelu: return "gelu";
    case OpKind::attention: return "attention";
    case OpKind::scale_columns: return "scale_columns";
    case OpKind::take_rows: return "take_rows";
  }
  return "?";
}

int Graph::add_tensor(Tensor t) {
  tensors.push_back(std::move(t));
  return static_cast<int>(tensors.size()) - 1;
}

namespace {

using model::GemmRole;

struct Builder {
  Graph& g;
  std::vector<Op>* ops;

  int activation(const std::string& name, std::uint32_t rows, std::uint32_t cols, DType dtype = DType::f16) {
    return g.add_tensor({name, rows, cols, dtype, TensorKind::activation});
  }
  int param(const std::string& name, std::uint32_t rows, std::uint32_t cols, DType dtype, bool per_layer,
            GemmRole role = GemmRole::Embedding) {
    return g.add_tensor({name, rows, cols, dtype, per_layer ? TensorKind::sequence : TensorKind::parameter, role});
  }
  int emit(Op op) {
    ops->push_back(std::move(op));
    return ops->back().output;
  }

  // y = x W [+ b] with the role's operand precision: an explicit cast for FP8 roles.
  int linear(const std::string& name, int x, std::uint32_t out_cols, GemmRole role, bool per_layer, bool bias = true) {
    const auto rows = g.tensor(x).rows, k = g.tensor(x).cols;  // copies: g.tensors grows below
    const bool fp8 = g.numerics.role(role).fp8;
    const DType operand = fp8 ? DType::f143 : DType::f16;
    int a = x;
    if (fp8) a = emit({OpKind::cast_fp8, name + ".cast", {x}, activation(name + ".in8", rows, k, DType::f143), role});
    const int w = param(name + ".weight", k, out_cols, operand, per_layer, role);
    if (!bias) return emit({OpKind::gemm, name, {a, w}, activation(name + ".acc", rows, out_cols), role});
    const int b = param(name + ".bias", 1, out_cols, DType::f16, per_layer);
    const int acc = emit({OpKind::gemm, name, {a, w}, activation(name + ".acc", rows, out_cols), role});
    return emit({OpKind::bias_add, name + ".bias", {acc, b}, activation(name + ".out", rows, out_cols)});
  }

  int layernorm(const std::string& name, int x, bool per_layer, NormUse use = NormUse::other) {
    // Copies, not a reference: adding tensors below may move g.tensors.
    const std::uint32_t rows = g.tensor(x).rows, cols = g.tensor(x).cols;
    const int gamma = param(name + ".scale", 1, cols, DType::f16, per_layer);
    const int beta = param(name + ".bias", 1, cols, DType::f16, per_layer);
    Op op{OpKind::layernorm, name, {x, gamma, beta}, activation(name + ".out", rows, cols)};
    op.eps = g.config.layer_norm_eps;
    op.norm_use = use;
    return emit(op);
  }

  int attention(const std::string& name, int q, std::uint32_t q_col, int kv, std::uint32_t k_col, std::uint32_t v_col,
                std::uint32_t rows, AttentionUse use) {
    Op op{OpKind::attention, name, {q, kv}, activation(name + ".out", rows, g.config.width)};
    op.images = static_cast<std::uint32_t>(g.config.batch);
    op.attention_use = use;
    op.shared_query = use == AttentionUse::map_pooling;  // every image's query is the probe
    op.q_col = q_col;
    op.k_col = k_col;
    op.v_col = v_col;
    op.heads = static_cast<std::uint32_t>(g.config.heads);
    op.head_dim = static_cast<std::uint32_t>(g.config.head_dim);
    return emit(op);
  }

  int add(const std::string& name, int a, int b) {
    const Tensor& t = g.tensor(a);
    return emit({OpKind::add, name, {a, b}, activation(name + ".out", t.rows, t.cols)});
  }

  int mlp(const std::string& prefix, int h, GemmRole up, GemmRole down, bool per_layer) {
    const int u = linear(prefix + ".fc1", h, static_cast<std::uint32_t>(g.config.mlp), up, per_layer);
    Op gelu{OpKind::gelu, prefix + ".gelu", {u}, activation(prefix + ".gelu.out", g.tensor(u).rows, g.tensor(u).cols)};
    gelu.activation = g.config.activation;
    const int a = emit(gelu);
    return linear(prefix + ".fc2", a, static_cast<std::uint32_t>(g.config.width), down, per_layer);
  }

  // x * gamma[col] when the config has LayerScale (DINOv2), else x.
  int layer_scale(const std::string& name, int x) {
    if (!g.config.layer_scale) return x;
    const std::uint32_t rows = g.tensor(x).rows, cols = g.tensor(x).cols;
    const int gamma = param(name + ".scale", 1, cols, DType::f16, true);
    return emit({OpKind::scale_columns, name, {x, gamma}, activation(name + ".out", rows, cols)});
  }

  // Patch rows -> token rows (see build_vit_graph).
  int embedding(std::uint32_t rows) {
    const auto w = static_cast<std::uint32_t>(g.config.width);
    if (!g.config.class_token) {
      const int pos = param("embeddings.position", rows, w, DType::f16, false);
      return add("embeddings.add_position", linear("embeddings.patch", g.input, w, GemmRole::Embedding, false), pos);
    }
    const int addend = param("embeddings.token_addend", rows, w, DType::f16, false);
    return add("embeddings.add_tokens", linear("embeddings.patch", g.input, w, GemmRole::Embedding, false, false), addend);
  }

  // SigLIP's MAP head over the final-LN tokens xn.
  int map_head(int xn) {
    const auto w = static_cast<std::uint32_t>(g.config.width);
    const int probe = param("head.probe", 1, w, DType::f16, false);
    const int q = linear("head.q", probe, w, GemmRole::MapQuery, false);
    const int kv = linear("head.kv", xn, 2 * w, GemmRole::MapKv, false);
    const int pooled = attention("head.attention", q, 0, kv, 0, w, static_cast<std::uint32_t>(g.config.batch),
                                 AttentionUse::map_pooling);
    const int a = linear("head.out", pooled, w, GemmRole::MapOut, false);
    return add("head.residual", a, mlp("head.mlp", layernorm("head.ln", a, false), GemmRole::MapMlpUp,
                                       GemmRole::MapMlpDown, false));
  }

  // Each image's class token after the final LayerNorm, then the projection if any.
  int class_token_output(int x) {
    const auto images = static_cast<std::uint32_t>(g.config.batch), w = static_cast<std::uint32_t>(g.config.width);
    Op take{OpKind::take_rows, "pooled.class_token", {x}, activation("pooled.class_token.out", images, w)};
    take.row_stride = static_cast<std::uint32_t>(g.config.tokens());
    const int y = layernorm("post_layernorm", emit(take), false);
    if (g.config.projection_dim == 0) return y;
    return linear("projection", y, static_cast<std::uint32_t>(g.config.projection_dim), GemmRole::Projection, false, false);
  }

  int output(int x) {
    switch (g.config.pooling) {
      case model::Pooling::map_head: return map_head(layernorm("post_layernorm", x, false));
      case model::Pooling::class_token: return class_token_output(x);
      case model::Pooling::tokens:  // CLIP's post_layernorm touches only the pooled token
        return g.config.family == model::Family::clip ? x : layernorm("post_layernorm", x, false);
      case model::Pooling::hidden_state: return x;
    }
    throw Error("compiler: unknown pooling", kExitInternal);
  }
};

}  // namespace

Graph build_vit_graph(const model::ViTConfig& c, const model::NumericsConfig& numerics) {
  return build_stage_graph(c, numerics, StageRange{}, static_cast<std::uint32_t>(c.layers));
}

Graph build_stage_graph(const model::ViTConfig& c, const model::NumericsConfig& numerics, StageRange stage,
                        std::uint32_t layers) {
  c.validate();
  if (layers == 0 || stage.first_layer + layers > static_cast<std::uint32_t>(c.layers))
    throw Error("compiler: stage of layers " + std::to_string(stage.first_layer) + " + " + std::to_string(layers) +
                    " outside the model's " + std::to_string(c.layers),
                kExitInternal);
  Graph g;
  g.config = c;
  g.stage = stage;
  g.numerics = numerics;
  g.loop_count = layers;
  const auto tokens = static_cast<std::uint32_t>(c.tokens() * c.batch);
  const auto w = static_cast<std::uint32_t>(c.width);

  Builder b{g, &g.prologue};
  int x = -1;
  if (stage.embeds) {
    g.input = g.add_tensor({"image.patches", tokens, static_cast<std::uint32_t>(c.patch_dim()), DType::f16, TensorKind::input});
    x = b.embedding(tokens);
    if (c.pre_layernorm) x = b.layernorm("pre_layernorm", x, false);
  } else {
    x = g.input = g.add_tensor({"stream.in", tokens, w, DType::f16, TensorKind::input});
  }

  b.ops = &g.body;
  const int h1 = b.layernorm("layer.ln1", x, true, NormUse::encoder_attention);
  const int qkv = b.linear("layer.qkv", h1, 3 * w, GemmRole::Qkv, true);
  const int attn = b.attention("layer.attention", qkv, 0, qkv, w, 2 * w, tokens, AttentionUse::encoder);
  const int x1 = b.add("layer.residual1", x, b.layer_scale("layer.ls1", b.linear("layer.out", attn, w, GemmRole::AttentionOut, true)));
  const int h2 = b.layernorm("layer.ln2", x1, true, NormUse::encoder_mlp);
  const int x2 = b.add("layer.residual2", x1,
                       b.layer_scale("layer.ls2", b.mlp("layer.mlp", h2, GemmRole::MlpUp, GemmRole::MlpDown, true)));
  // The loop carries x: the body's result is the next iteration's input (lowering binds them).

  b.ops = &g.epilogue;
  const int y = stage.pools ? b.output(x2) : x2;
  g.tensors[static_cast<std::size_t>(y)].kind = TensorKind::output;
  g.output = y;
  return g;
}

}  // namespace tilevit::compiler
