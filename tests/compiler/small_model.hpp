#pragma once
// The small model compiled for the 16-tile test machine: what most compiler, package and
// device tests work on, the independent verifier's report on it, and grids to pin on it.
#include "compiler/compile.hpp"
#include "compiler/verify.hpp"

namespace tilevit::test_support {

inline compiler::CompiledModel compile_small(int layers = 2, const compiler::CompileOptions& options = {}) {
  model::ViTConfig c = model::ViTConfig::small();
  c.layers = layers;
  return compiler::compile_model(compiler::build_vit_graph(c, model::NumericsConfig::uniform(-4)), target::test16(),
                                 options);
}

inline compiler::VerifyReport verify_on_test16(const compiler::CompiledModel& m) {
  return compiler::verify_program(target::test16(), m.executable.program, m.executable.bindings, m.executable.tensors);
}

// Pins (CompileOptions::pins) for grids the automatic choice does not take on the small
// model (it splits fc2 in 3 K blocks and attention in key blocks of 2): fc2 in 9
// one-panel K blocks, qkv's weight blocks multicast to 2 row blocks, one key per block.
inline compiler::CompileOptions pinned_splits() {
  compiler::CompileOptions options;
  options.plan.pins.gemm["layer.mlp.fc2"] = compiler::GemmSplits{1, 9, 1};
  options.plan.pins.gemm["layer.qkv"] = compiler::GemmSplits{2, 1, 2};
  options.plan.pins.attention["layer.attention"] = compiler::AttentionBlocks{4, 1};
  return options;
}

// The encoder's LayerNorms split over the residual's column parts (the patch GEMM's
// output in 3 column blocks of 48) and the MLP's GELU writing FP8.
inline compiler::CompileOptions split_norm_pins() {
  compiler::CompileOptions options;
  options.plan.pins.gemm["embeddings.patch"] = compiler::GemmSplits{1, 1, 3};
  options.plan.pins.split_norms = {"layer.ln1", "layer.ln2"};
  options.plan.pins.fp8_output_gelus = {"layer.mlp.gelu"};
  return options;
}

}  // namespace tilevit::test_support
