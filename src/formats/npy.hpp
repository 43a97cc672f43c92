#pragma once
// NumPy .npy files (format version 1.0/2.0), float32 little-endian, C order: embeddings
// out, fixtures and pre-processed image tensors in.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tilevit::formats {

struct NpyArray {
  std::vector<std::int64_t> shape;
  std::vector<float> data;  // product(shape) values
};

// Writes atomically (temporary name + rename). Throws Error naming the path.
void write_npy(const std::string& path, const std::vector<std::int64_t>& shape, std::span<const float> data);

// Reads '<f4' (or '<f8', converted) C-order arrays; bounds every size before
// allocating; throws Error naming the path and the offending header field.
NpyArray read_npy(const std::string& path);

}  // namespace tilevit::formats
