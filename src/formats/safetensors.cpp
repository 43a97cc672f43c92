#include "formats/safetensors.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "support/atomic_file.hpp"
#include "support/error.hpp"
#include "support/utf8.hpp"

// The reader converts by memcpy of little-endian bytes; tilevit only targets x86-64.
static_assert(std::endian::native == std::endian::little, "safetensors I/O assumes a little-endian host");

namespace tilevit::formats {
namespace {

using Entry = SafetensorsFile::Entry;

constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;  // the reference reader's limit

// Every dtype the reference reader accepts, so that a valid file with, say, I64 tensors
// still opens; only F32/F16/BF16 can be read as float.
struct DTypeInfo {
  const char* name;
  std::uint64_t size;  // bytes per element
};
constexpr DTypeInfo kDTypes[] = {
    {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"I16", 2}, {"U16", 2}, {"F16", 2},
    {"BF16", 2}, {"I32", 4}, {"U32", 4}, {"F32", 4},     {"F64", 8},     {"I64", 8}, {"U64", 8},
};

int find_dtype(const std::string& name) {
  for (int i = 0; i < static_cast<int>(std::size(kDTypes)); ++i)
    if (name == kDTypes[i].name) return i;
  return -1;
}

std::optional<model::DType> to_model_dtype(int dtype) {
  const std::string name = kDTypes[dtype].name;
  if (name == "F32") return model::DType::F32;
  if (name == "F16") return model::DType::F16;
  if (name == "BF16") return model::DType::BF16;
  return std::nullopt;
}

// Error messages are one line: JSON parser messages and user strings may carry control
// characters, so those are replaced, and very long texts are cut.
std::string one_line(const std::string& text, std::size_t max_chars = 200) {
  std::string out;
  for (char c : text) {
    if (out.size() >= max_chars) {
      out += "...";
      break;
    }
    out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? ' ' : c;
  }
  return out;
}

std::string quote_name(const std::string& name) { return "'" + one_line(name) + "'"; }

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}


// Parses the header JSON; nlohmann keeps the last of duplicate keys silently, so a parser
// callback tracks the keys of every open object and remembers the first duplicate.
nlohmann::json parse_header(const std::string& path, const char* text, std::size_t size) {
  std::vector<std::set<std::string>> open_objects;
  std::optional<std::string> duplicate;
  auto callback = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start) {
      open_objects.emplace_back();
    } else if (event == Event::object_end) {
      if (!open_objects.empty()) open_objects.pop_back();
    } else if (event == Event::key && !open_objects.empty() && parsed.is_string()) {
      if (!open_objects.back().insert(parsed.get<std::string>()).second && !duplicate)
        duplicate = parsed.get<std::string>();
    }
    return true;
  };
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(text, text + size, callback);
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": safetensors header is not valid JSON: " + one_line(e.what()));
  }
  if (!header.is_object())
    throw Error(path + ": safetensors header is not a JSON object (it is a " + header.type_name() + ")");
  if (duplicate) throw Error(path + ": safetensors header has duplicate key " + quote_name(*duplicate));
  return header;
}

// A JSON integer that is >= 0 and fits int64, else nullopt (floats and bools are refused).
std::optional<std::int64_t> non_negative_int(const nlohmann::json& value) {
  if (value.is_number_unsigned()) {
    const auto v = value.get<std::uint64_t>();
    if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
    return static_cast<std::int64_t>(v);
  }
  if (value.is_number_integer()) {
    const auto v = value.get<std::int64_t>();
    if (v < 0) return std::nullopt;
    return v;
  }
  return std::nullopt;
}

// Validates one tensor entry on its own (types, dtype, shape, sizes); the tiling of the
// data buffer is checked over all entries afterwards.
Entry parse_entry(const std::string& path, const std::string& name, const nlohmann::json& value,
                  std::uint64_t data_size) {
  const std::string where = path + ": tensor " + quote_name(name);
  if (!value.is_object()) throw Error(where + " entry is not a JSON object");
  Entry entry;

  const auto dtype_it = value.find("dtype");
  if (dtype_it == value.end() || !dtype_it->is_string())
    throw Error(where + " has no string field \"dtype\"");
  entry.dtype = find_dtype(dtype_it->get<std::string>());
  if (entry.dtype < 0) throw Error(where + " has unknown dtype \"" + one_line(dtype_it->get<std::string>()) + "\"");

  const auto shape_it = value.find("shape");
  if (shape_it == value.end() || !shape_it->is_array())
    throw Error(where + " has no array field \"shape\"");
  for (std::size_t i = 0; i < shape_it->size(); ++i) {
    const nlohmann::json& dim = (*shape_it)[i];
    if (!dim.is_number_integer())
      throw Error(where + " shape[" + std::to_string(i) + "] is not an integer: " + one_line(dim.dump()));
    if (dim.is_number_unsigned() ? false : dim.get<std::int64_t>() < 0)
      throw Error(where + " shape[" + std::to_string(i) + "] is negative: " + dim.dump());
    const auto v = non_negative_int(dim);
    if (!v) throw Error(where + " shape[" + std::to_string(i) + "] = " + dim.dump() + " overflows int64");
    entry.shape.push_back(*v);
  }
  // Same rule as the reference: the running product must not overflow, even when a later
  // dimension is 0.
  std::int64_t elements = 1;
  for (std::int64_t dim : entry.shape)
    if (__builtin_mul_overflow(elements, dim, &elements))
      throw Error(where + " shape " + shape_text(entry.shape) + ": element count overflows int64");
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<std::uint64_t>(elements), kDTypes[entry.dtype].size, &bytes) ||
      bytes > data_size)
    throw Error(where + " shape " + shape_text(entry.shape) + " of " + kDTypes[entry.dtype].name +
                " needs more bytes than the file's data buffer holds (" + std::to_string(data_size) +
                "; overflow or truncated file)");

  const auto offsets_it = value.find("data_offsets");
  if (offsets_it == value.end() || !offsets_it->is_array() || offsets_it->size() != 2)
    throw Error(where + " has no field \"data_offsets\" of the form [begin, end]");
  const auto begin = non_negative_int((*offsets_it)[0]);
  const auto end = non_negative_int((*offsets_it)[1]);
  if (!begin || !end)
    throw Error(where + " data_offsets " + one_line(offsets_it->dump()) + " are not non-negative integers");
  entry.begin = static_cast<std::uint64_t>(*begin);
  entry.end = static_cast<std::uint64_t>(*end);
  const std::string offsets = "[" + std::to_string(entry.begin) + ", " + std::to_string(entry.end) + "]";
  if (entry.end < entry.begin) throw Error(where + " data_offsets " + offsets + " end before begin");
  if (entry.end > data_size)
    throw Error(where + " data_offsets " + offsets + " run past the end of the data buffer (" +
                std::to_string(data_size) + " bytes; truncated file?)");
  if (entry.end - entry.begin != bytes)
    throw Error(where + " data_offsets " + offsets + " span " + std::to_string(entry.end - entry.begin) +
                " bytes but shape " + shape_text(entry.shape) + " of " + kDTypes[entry.dtype].name + " needs " +
                std::to_string(bytes) + " (byte size mismatch)");
  return entry;
}

// The tensors must cover the data buffer exactly: sorted by (begin, end) each begins where
// the previous ended, the first at 0 and the last at the buffer's end. (Sorting by the
// pair keeps several zero-sized tensors at one offset legal, as in the reference.)
void check_tiling(const std::string& path, const std::map<std::string, Entry>& entries, std::uint64_t data_size) {
  std::vector<std::tuple<std::uint64_t, std::uint64_t, const std::string*>> order;
  for (const auto& [name, entry] : entries) order.emplace_back(entry.begin, entry.end, &name);
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a), *std::get<2>(a)) <
           std::tie(std::get<0>(b), std::get<1>(b), *std::get<2>(b));
  });
  std::uint64_t expected = 0;
  for (const auto& [begin, end, name] : order) {
    if (begin != expected)
      throw Error(path + ": tensor " + quote_name(*name) + " data_offsets [" + std::to_string(begin) + ", " +
                  std::to_string(end) + "] do not tile the data buffer: expected begin " + std::to_string(expected) +
                  (begin < expected ? " (overlap)" : " (gap)"));
    expected = end;
  }
  if (expected != data_size)
    throw Error(path + ": data_offsets do not tile the data buffer: tensors end at byte " + std::to_string(expected) +
                " but the data buffer holds " + std::to_string(data_size) + " bytes");
}

// Exact IEEE binary16 -> binary32 (every half is representable; NaN payloads are kept).
float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  const std::uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);  // subnormal or zero
    return sign ? -magnitude : magnitude;
  }
  const std::uint32_t bits = exponent == 0x1f ? (sign | 0x7f800000u | (mantissa << 13))
                                              : (sign | ((exponent + 112) << 23) | (mantissa << 13));
  return std::bit_cast<float>(bits);
}

float bf16_to_float(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }

}  // namespace

std::unique_ptr<SafetensorsFile> SafetensorsFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(path + ": not a regular file");
  }
  const auto file_size = static_cast<std::uint64_t>(st.st_size);
  if (file_size < 8) {
    ::close(fd);
    throw Error(path + ": file is " + std::to_string(file_size) + " bytes, under the 8-byte safetensors header length");
  }
  void* mapped = ::mmap(nullptr, file_size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_errno = errno;
  ::close(fd);  // the mapping keeps the file alive
  if (mapped == MAP_FAILED) throw Error(path + ": cannot memory-map: " + std::strerror(map_errno));

  // From here the destructor unmaps on any validation failure.
  std::unique_ptr<SafetensorsFile> file(new SafetensorsFile());
  file->path_ = path;
  file->map_ = static_cast<const std::byte*>(mapped);
  file->map_size_ = file_size;

  std::uint64_t header_size = 0;
  std::memcpy(&header_size, file->map_, 8);
  if (header_size > kMaxHeaderBytes)
    throw Error(path + ": header length " + std::to_string(header_size) + " is over the limit of " +
                std::to_string(kMaxHeaderBytes) + " bytes");
  if (8 + header_size > file_size)
    throw Error(path + ": header length " + std::to_string(header_size) + " runs past the end of the file (" +
                std::to_string(file_size) + " bytes)");
  const auto* header_text = reinterpret_cast<const char*>(file->map_ + 8);
  std::size_t bad_at = 0;
  if (!valid_utf8({header_text, header_size}, &bad_at))
    throw Error(path + ": header is not valid UTF-8 (at header byte " + std::to_string(bad_at) + ")");
  const nlohmann::json header = parse_header(path, header_text, header_size);

  const std::uint64_t data_size = file_size - 8 - header_size;
  file->data_ = file->map_ + 8 + header_size;
  for (const auto& [key, value] : header.items()) {
    if (key == "__metadata__") {
      if (!value.is_object()) throw Error(path + ": \"__metadata__\" is not a JSON object");
      for (const auto& [meta_key, meta_value] : value.items()) {
        if (!meta_value.is_string())
          throw Error(path + ": \"__metadata__\" value of " + quote_name(meta_key) + " is not a string");
        file->metadata_.emplace(meta_key, meta_value.get<std::string>());
      }
      continue;
    }
    file->entries_.emplace(key, parse_entry(path, key, value, data_size));
  }
  check_tiling(path, file->entries_, data_size);
  return file;
}

SafetensorsFile::~SafetensorsFile() {
  if (map_) ::munmap(const_cast<std::byte*>(map_), map_size_);
}

std::string SafetensorsFile::describe() const { return path_; }

std::optional<model::TensorInfo> SafetensorsFile::info(const std::string& name) const {
  const auto it = entries_.find(name);
  if (it == entries_.end()) return std::nullopt;
  const auto dtype = to_model_dtype(it->second.dtype);
  if (!dtype)
    throw Error(path_ + ": tensor " + quote_name(name) + " has dtype " + kDTypes[it->second.dtype].name +
                "; tilevit reads F32, F16 or BF16");
  model::TensorInfo info;
  info.name = name;
  info.dtype = *dtype;
  info.shape = it->second.shape;
  return info;
}

void SafetensorsFile::read_f32(const std::string& name, std::span<float> out) const {
  const auto it = entries_.find(name);
  if (it == entries_.end()) throw Error(path_ + ": no tensor " + quote_name(name));
  const Entry& entry = it->second;
  const auto dtype = to_model_dtype(entry.dtype);
  if (!dtype)
    throw Error(path_ + ": tensor " + quote_name(name) + " has dtype " + kDTypes[entry.dtype].name +
                "; tilevit reads F32, F16 or BF16");
  const std::uint64_t elements = (entry.end - entry.begin) / kDTypes[entry.dtype].size;
  if (out.size() != elements)
    throw Error(path_ + ": tensor " + quote_name(name) + " has " + std::to_string(elements) +
                    " elements but the read buffer holds " + std::to_string(out.size()),
                kExitInternal);
  const std::byte* src = data_ + entry.begin;  // may be unaligned: copy bytes, never cast
  switch (*dtype) {
    case model::DType::F32:
      if (elements) std::memcpy(out.data(), src, elements * sizeof(float));
      break;
    case model::DType::F16:
    case model::DType::BF16:
      for (std::uint64_t i = 0; i < elements; ++i) {
        std::uint16_t bits = 0;
        std::memcpy(&bits, src + 2 * i, 2);
        out[i] = *dtype == model::DType::F16 ? half_to_float(bits) : bf16_to_float(bits);
      }
      break;
  }
}

std::vector<std::string> SafetensorsFile::names() const {
  std::vector<std::string> result;
  result.reserve(entries_.size());
  for (const auto& [name, entry] : entries_) result.push_back(name);
  return result;  // std::map order: sorted
}

const std::map<std::string, std::string>& SafetensorsFile::metadata() const { return metadata_; }

void write_safetensors(const std::string& path, const model::TensorSource& source,
                       const std::vector<std::string>& names,
                       const std::map<std::string, std::string>& metadata) {
  // Plan first (shapes, offsets, header) so that nothing is written for a bad request.
  struct Planned {
    const std::string* name;
    std::int64_t elements;
  };
  std::vector<Planned> plan;
  std::set<std::string> seen;
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  std::uint64_t offset = 0;
  std::int64_t max_elements = 0;
  for (const std::string& name : names) {
    if (name == "__metadata__") throw Error(path + ": cannot write a tensor named \"__metadata__\"");
    if (!seen.insert(name).second) throw Error(path + ": tensor " + quote_name(name) + " is listed twice");
    const auto info = source.info(name);
    if (!info) throw Error(path + ": source " + source.describe() + " has no tensor " + quote_name(name));
    std::int64_t elements = 1;
    for (std::int64_t dim : info->shape)
      if (dim < 0 || __builtin_mul_overflow(elements, dim, &elements))
        throw Error(path + ": tensor " + quote_name(name) + " has invalid shape " + shape_text(info->shape));
    std::uint64_t bytes = 0, end = 0;
    if (__builtin_mul_overflow(static_cast<std::uint64_t>(elements), sizeof(float), &bytes) ||
        __builtin_add_overflow(offset, bytes, &end))
      throw Error(path + ": tensor " + quote_name(name) + " shape " + shape_text(info->shape) + " is too large");
    header[name] = {{"dtype", "F32"}, {"shape", info->shape}, {"data_offsets", {offset, end}}};
    offset = end;
    max_elements = std::max(max_elements, elements);
    plan.push_back({&name, elements});
  }
  if (!metadata.empty()) {
    nlohmann::ordered_json meta = nlohmann::ordered_json::object();
    for (const auto& [key, value] : metadata) meta[key] = value;  // std::map order: sorted
    header["__metadata__"] = std::move(meta);
  }
  std::string header_text;
  try {
    header_text = header.dump();
  } catch (const nlohmann::json::exception& e) {  // e.g. a name that is not valid UTF-8
    throw Error(path + ": cannot encode the safetensors header: " + one_line(e.what()));
  }
  header_text.append((8 - header_text.size() % 8) % 8, ' ');  // as the reference writer pads

  write_file_atomically(path, [&](std::ostream& out) {
    const std::uint64_t header_size = header_text.size();
    out.write(reinterpret_cast<const char*>(&header_size), 8);
    out.write(header_text.data(), static_cast<std::streamsize>(header_text.size()));
    std::vector<float> buffer(static_cast<std::size_t>(max_elements));  // one tensor at a time
    for (const Planned& tensor : plan) {
      const std::span<float> values(buffer.data(), static_cast<std::size_t>(tensor.elements));
      source.read_f32(*tensor.name, values);
      out.write(reinterpret_cast<const char*>(values.data()),
                static_cast<std::streamsize>(values.size() * sizeof(float)));
      if (!out) throw Error(path + ": write failed at tensor " + quote_name(*tensor.name), kExitResource);
    }
  });
}

}  // namespace tilevit::formats
