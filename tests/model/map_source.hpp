#pragma once
// A TensorSource over an in-memory map, for tests that need to alter single tensors.
#include <map>

#include "model/random_model.hpp"
#include "model/tensor_source.hpp"
#include "support/error.hpp"

namespace tilevit::test_support {

struct MapSource : model::TensorSource {
  std::map<std::string, std::pair<std::vector<std::int64_t>, std::vector<float>>> tensors;

  static MapSource copy_of(const model::RandomModelSource& source) {
    MapSource m;
    for (const auto& t : source.tensors()) {
      std::vector<float> data(static_cast<std::size_t>(source.info(t.name)->elements()));
      source.read_f32(t.name, data);
      m.tensors[t.name] = {t.shape, std::move(data)};
    }
    return m;
  }
  std::string describe() const override { return "test.safetensors"; }
  std::optional<model::TensorInfo> info(const std::string& name) const override {
    auto it = tensors.find(name);
    if (it == tensors.end()) return std::nullopt;
    return model::TensorInfo{name, model::DType::F32, it->second.first};
  }
  void read_f32(const std::string& name, std::span<float> out) const override {
    const auto& data = tensors.at(name).second;
    std::copy(data.begin(), data.end(), out.begin());
  }
};

}  // namespace tilevit::test_support
