#pragma once
// A named-tensor source in Hugging Face layout and names (e.g.
// "vision_model.encoder.layers.0.self_attn.q_proj.weight", shape [out, in]).
// Implemented by the random test model (model/random_model.hpp) and by safetensors
// files (formats/safetensors.hpp); the weight loader (model/weights.hpp) pulls from it.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tilevit::model {

enum class DType { F32, F16, BF16 };
const char* dtype_name(DType dtype);  // "F32", "F16", "BF16" as safetensors spells them

struct TensorInfo {
  std::string name;
  DType dtype = DType::F32;
  std::vector<std::int64_t> shape;
  std::int64_t elements() const;
};

class TensorSource {
 public:
  virtual ~TensorSource() = default;
  // What to call this source in error messages (a file path, "random model seed 0").
  virtual std::string describe() const = 0;
  // Metadata of a tensor, or nullopt if the source does not hold it.
  virtual std::optional<TensorInfo> info(const std::string& name) const = 0;
  // Converts the tensor to FP32 into `out`, whose size must equal info(name)->elements().
  virtual void read_f32(const std::string& name, std::span<float> out) const = 0;
};

}  // namespace tilevit::model
