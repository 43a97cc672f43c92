#pragma once
// The algorithm: a graph of the model's operations on 2-D tensors, independent of any
// machine (Halide's "algorithm" half). The encoder layers are one structured loop: the
// body is a list of ops compiled once; per-layer weights are parameter *sequences*
// indexed by the loop iteration. Lowering (lower.hpp) decides the schedule.
#include <cstdint>
#include <string>
#include <vector>

#include "model/config.hpp"
#include "model/numerics_config.hpp"

namespace tilevit::compiler {

enum class DType : std::uint8_t { f16, f143, f32 };
std::uint32_t dtype_bytes(DType dtype);
const char* dtype_name(DType dtype);

enum class TensorKind : std::uint8_t {
  input,      // uploaded by the host for every call (patch rows of the images, stacked)
  parameter,  // resident weight, uploaded once
  sequence,   // per-layer weight: one slice per loop iteration, resident
  activation, // produced and consumed on the device
  output,     // downloaded by the host after every call
};

struct Tensor {
  std::string name;  // e.g. "layer.qkv.weight"
  std::uint32_t rows = 0, cols = 0;
  DType dtype = DType::f16;
  TensorKind kind = TensorKind::activation;
  model::GemmRole role = model::GemmRole::Embedding;  // for GEMM weights: whose scale quantises them
  std::uint64_t bytes() const { return std::uint64_t(rows) * cols * dtype_bytes(dtype); }
};

enum class OpKind : std::uint8_t {
  cast_fp8,       // in f16 -> out f143 at the role's scale
  gemm,           // A [M,K] x W [K,N] -> out [M,N] f16 (f143 or f16 operands per role)
  bias_add,       // out = in + bias[col] (f16)
  add,            // out = a + b (f16), same shape; b may be a parameter (position embedding)
  layernorm,      // rows, FP32 statistics; gamma, beta parameters
  gelu,           // the config's activation (Op::activation): tanh GELU, erf GELU or quick_gelu
  attention,      // 16-head softmax(Q K^T * scale) V; inputs q, k, v tensors with a column offset
  // After SigLIP's ops, so their numbers stay.
  scale_columns,  // out = in * scale[col] (f16), scale a parameter: LayerScale
  take_rows,      // out row i = in row i * row_stride: each image's class token (data movement only)
};
const char* op_name(OpKind kind);

// Which attention an attention op is: the encoder layers' self-attention, or the MAP
// head's pooling by its probe (their numerics splits are recorded apart).
enum class AttentionUse : std::uint8_t { encoder, map_pooling };
// Which LayerNorm a layernorm op is: the encoder layer's before attention or before the
// MLP (their split over tiles is recorded for the reference), or another (pre, post, MAP).
enum class NormUse : std::uint8_t { other, encoder_attention, encoder_mlp };

struct Op {
  OpKind kind;
  std::string name;             // "layer.qkv", "head.mlp.fc1", ...
  std::vector<int> inputs;      // tensor ids
  int output = -1;              // tensor id
  model::GemmRole role = model::GemmRole::Embedding;  // cast/gemm
  // attention: column offsets of q, k, v inside their tensors; heads and head_dim.
  std::uint32_t q_col = 0, k_col = 0, v_col = 0, heads = 0, head_dim = 0;
  // attention over a batch: each image's queries attend to its own keys; with
  // shared_query every image uses the query tensor's single row (the MAP probe).
  std::uint32_t images = 1;
  bool shared_query = false;
  AttentionUse attention_use = AttentionUse::encoder;
  float eps = 0;                // layernorm
  NormUse norm_use = NormUse::other;  // layernorm
  model::Activation activation = model::Activation::gelu_tanh;  // gelu
  std::uint32_t row_stride = 0;  // take_rows
};

// Which part of the model a graph computes. A pipeline stage (docs/SCALE_OUT.md) holds
// the loop's layers [first_layer, first_layer + loop_count); only the first stage embeds
// the image and only the last one pools. The others take or give the residual stream,
// [batch x tokens, width] FP16, through an input or output binding like the image's.
struct StageRange {
  std::uint32_t first_layer = 0;
  bool embeds = true;  // the input is the image's patch rows (else the residual stream)
  bool pools = true;   // the output is the model's (else the residual stream)
  bool whole() const { return first_layer == 0 && embeds && pools; }
  bool operator==(const StageRange&) const = default;
};

struct Graph {
  model::ViTConfig config;
  StageRange stage;  // whole model unless a pipeline stage
  model::NumericsConfig numerics;
  std::vector<Tensor> tensors;
  std::vector<Op> prologue, body, epilogue;  // body runs loop_count times
  std::uint32_t loop_count = 0;
  int input = -1, output = -1;

  int add_tensor(Tensor t);
  const Tensor& tensor(int id) const { return tensors.at(static_cast<std::size_t>(id)); }
};

// A ViT vision tower: embedding, `config.layers` encoder layers as one loop, then the
// config's output (docs/COMPILER.md). Rows are batch x tokens (the batch's tokens
// stacked). SigLIP: patch GEMM + bias, + position embedding (batch x patches rows, the
// host uploading the checkpoint's rows once per image). With a class token the input
// holds a zero row where each class or register token goes, the patch GEMM has no bias,
// and the host uploads one addend per token: class token + position 0, the registers,
// position + patch bias (model::token_addend), so the GEMM output plus the addend is the
// token sequence.
Graph build_vit_graph(const model::ViTConfig& config, const model::NumericsConfig& numerics);

// One pipeline stage of the model: `layers` encoder layers from stage.first_layer, the
// embedding if stage.embeds, the output if stage.pools. The stage's input tensor is
// "stream.in" when it does not embed; its output is the last layer's residual stream when
// it does not pool.
Graph build_stage_graph(const model::ViTConfig& config, const model::NumericsConfig& numerics, StageRange stage,
                        std::uint32_t layers);

}  // namespace tilevit::compiler
