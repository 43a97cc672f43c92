#pragma once
// Hugging Face safetensors files: 8-byte little-endian header length N, N bytes of UTF-8
// JSON {name: {dtype, shape, data_offsets}, "__metadata__": {...}}, then the data buffer.
// Reading memory-maps the file and validates the whole header (as strictly as the
// reference reader) before any tensor is touched, so a hostile file can neither force a
// large allocation nor make a later read go out of bounds.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "model/tensor_source.hpp"

namespace tilevit::formats {

class SafetensorsFile : public model::TensorSource {
 public:
  // Memory-maps and fully validates the file before anything else is allocated.
  // Throws Error naming the path and the field/tensor at fault.
  static std::unique_ptr<SafetensorsFile> open(const std::string& path);
  ~SafetensorsFile() override;  // unmaps
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  std::string describe() const override;  // the path
  // Throws Error for a tensor whose (valid) dtype is not F32, F16 or BF16.
  std::optional<model::TensorInfo> info(const std::string& name) const override;
  // F32, F16 (IEEE half) and BF16 converted exactly to float; any other dtype -> Error
  // naming tensor + dtype; unknown name or wrong `out` size -> Error.
  void read_f32(const std::string& name, std::span<float> out) const override;
  std::vector<std::string> names() const;                      // sorted
  const std::map<std::string, std::string>& metadata() const;  // "__metadata__"

  // One validated header entry; `dtype` indexes the internal dtype table.
  struct Entry {
    int dtype = 0;
    std::vector<std::int64_t> shape;
    std::uint64_t begin = 0;  // byte offsets relative to the data buffer
    std::uint64_t end = 0;
  };

 private:
  SafetensorsFile() = default;

  std::string path_;
  const std::byte* map_ = nullptr;  // whole file
  std::size_t map_size_ = 0;
  const std::byte* data_ = nullptr;  // start of the data buffer inside map_
  std::map<std::string, Entry> entries_;
  std::map<std::string, std::string> metadata_;
};

// Writes F32 tensors in the order given, data packed in that order with no gaps; the
// JSON header has keys in that order followed by "__metadata__" when non-empty, padded
// with spaces to a multiple of 8 bytes (as the reference writer does). Same inputs ->
// same bytes. Atomic (write_file_atomically). Streams tensor by tensor (read_f32 into one
// buffer, write, reuse) so a 1.7 GB model never needs a second copy in memory.
void write_safetensors(const std::string& path, const model::TensorSource& source,
                       const std::vector<std::string>& names,
                       const std::map<std::string, std::string>& metadata);

}  // namespace tilevit::formats
