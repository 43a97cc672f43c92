#pragma once
// The small model compiled for the 16-tile test machine: what most compiler, package and
// device tests work on, and the independent verifier's report on it.
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
  return compiler::verify_program(target::test16(), m.lowered.program, m.lowered.bindings, m.graph.tensors);
}

}  // namespace tilevit::test_support
