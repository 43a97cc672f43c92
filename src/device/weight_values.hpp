#pragma once
// Maps the package's graph tensors (by name) to the model's weights and writes the
// rectangle a parameter binding asks for, quantised as the tensor's dtype (F143 at its
// GEMM role's scale, or FP16), every layer of a sequence at its stride.
#include <cstdint>
#include <span>
#include <vector>

#include "model/weights.hpp"
#include "package/program_codec.hpp"

namespace tilevit::device {

class WeightValues {
 public:
  // Throws if the weights' shapes differ from the package's model.
  WeightValues(const model::ViTWeights& weights, const compiler::Executable& package);
  void write(const compiler::HostBinding& binding, std::span<std::uint8_t> sram, std::uint32_t allocation_address,
             const target::MachineDescription& machine) const;

 private:
  // Element (row, col) of a graph tensor for loop iteration `layer`.
  struct Source {
    const std::vector<float>* data = nullptr;
    std::uint32_t ld = 0;         // row stride of `data`
    bool transposed = false;      // data is [out][in] = [col][row] of the tensor
    std::uint32_t row_modulo = 0; // rows repeat (position embedding per image)
  };
  Source source(const compiler::Tensor& tensor, std::uint32_t layer) const;
  const model::ViTWeights& w_;
  const compiler::Executable& pkg_;
  std::vector<float> token_addend_;  // model::token_addend, with a class token

};

}  // namespace tilevit::device
