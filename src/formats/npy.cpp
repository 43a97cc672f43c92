#include "formats/npy.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>

#include "support/atomic_file.hpp"
#include "support/error.hpp"

static_assert(std::endian::native == std::endian::little, "npy I/O assumes a little-endian host");

namespace tilevit::formats {
namespace {

constexpr char kMagic[] = "\x93NUMPY";  // 6 bytes
constexpr std::size_t kMagicSize = 6;
constexpr std::uint64_t kMaxHeaderBytes = 1 << 20;  // numpy's own headers are ~128 bytes
constexpr std::size_t kAlign = 64;                   // numpy aligns the data to 64 bytes
constexpr std::size_t kGrowthAxisMaxDigits = 21;     // numpy's spare room for growing shape[0]

// Python's repr of a tuple of ints: (), (5,), (2, 3).
std::string shape_repr(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// Cut and de-control a header excerpt so error messages stay on one line.
std::string excerpt(const std::string& text) {
  std::string out;
  for (char c : text.substr(0, 80)) out += (static_cast<unsigned char>(c) < 0x20) ? ' ' : c;
  return text.size() > 80 ? out + "..." : out;
}

// Parser of the header's Python dict literal, limited to what numpy writes:
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
 public:
  HeaderParser(const std::string& path, const std::string& text) : path_(path), text_(text) {}

  void parse(std::optional<std::string>& descr, std::optional<bool>& fortran,
             std::optional<std::vector<std::int64_t>>& shape) {
    skip_space();
    expect('{', "header dictionary");
    while (true) {
      skip_space();
      if (peek() == '}') {
        ++pos_;
        break;
      }
      const std::string key = parse_string("header key");
      skip_space();
      expect(':', "header key '" + excerpt(key) + "'");
      skip_space();
      if (key == "descr") {
        if (descr) fail("\"descr\" appears twice");
        descr = parse_string("\"descr\"");
      } else if (key == "fortran_order") {
        if (fortran) fail("\"fortran_order\" appears twice");
        fortran = parse_bool();
      } else if (key == "shape") {
        if (shape) fail("\"shape\" appears twice");
        shape = parse_shape();
      } else {
        fail("unexpected header key '" + excerpt(key) + "'");
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
      } else if (peek() != '}') {
        fail("expected ',' or '}' after the value of \"" + key + "\"");
      }
    }
    skip_space();
    if (pos_ != text_.size()) fail("unexpected text after the header dictionary");
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(path_ + ": npy header: " + what + " (header: " + excerpt(text_) + ")");
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\r'))
      ++pos_;
  }
  void expect(char c, const std::string& context) {
    if (peek() != c) fail("expected '" + std::string(1, c) + "' in " + context);
    ++pos_;
  }
  std::string parse_string(const std::string& field) {
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail(field + " is not a quoted string");
    const std::size_t close = text_.find(quote, pos_ + 1);
    if (close == std::string::npos) fail(field + " has an unterminated string");
    std::string value = text_.substr(pos_ + 1, close - pos_ - 1);
    pos_ = close + 1;
    return value;
  }
  bool parse_bool() {
    if (text_.compare(pos_, 4, "True") == 0) {
      pos_ += 4;
      return true;
    }
    if (text_.compare(pos_, 5, "False") == 0) {
      pos_ += 5;
      return false;
    }
    fail("\"fortran_order\" is neither True nor False");
  }
  std::vector<std::int64_t> parse_shape() {
    expect('(', "\"shape\" (a tuple)");
    std::vector<std::int64_t> dims;
    while (true) {
      skip_space();
      if (peek() == ')') {
        ++pos_;
        return dims;
      }
      if (peek() == '-') fail("\"shape\" has a negative dimension");
      if (peek() < '0' || peek() > '9') fail("\"shape\" has a dimension that is not an integer");
      std::int64_t dim = 0;
      while (peek() >= '0' && peek() <= '9') {
        if (__builtin_mul_overflow(dim, 10, &dim) || __builtin_add_overflow(dim, peek() - '0', &dim))
          fail("\"shape\" has a dimension that overflows int64");
        ++pos_;
      }
      if (peek() == 'L') ++pos_;  // Python 2 long literal in old files
      dims.push_back(dim);
      skip_space();
      if (peek() == ',') {
        ++pos_;
      } else if (peek() != ')') {
        fail("\"shape\" is not a tuple of integers");
      }
    }
  }

  const std::string& path_;
  const std::string& text_;
  std::size_t pos_ = 0;
};

}  // namespace

void write_npy(const std::string& path, const std::vector<std::int64_t>& shape, std::span<const float> data) {
  std::int64_t elements = 1;
  for (std::int64_t dim : shape)
    if (dim < 0 || __builtin_mul_overflow(elements, dim, &elements))
      throw Error(path + ": invalid npy shape " + shape_repr(shape));
  if (static_cast<std::uint64_t>(elements) != data.size())
    throw Error(path + ": npy shape " + shape_repr(shape) + " has " + std::to_string(elements) + " elements but " +
                std::to_string(data.size()) + " values were given");

  // Byte-for-byte what numpy's np.save writes (numpy >= 1.24): sorted keys, spare spaces
  // for growing shape[0], then spaces and '\n' up to a multiple of 64 bytes.
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape_repr(shape) + ", }";
  if (!shape.empty()) {
    const std::size_t digits = std::to_string(shape[0]).size();
    if (digits < kGrowthAxisMaxDigits) header.append(kGrowthAxisMaxDigits - digits, ' ');
  }
  std::size_t prefix = kMagicSize + 2 + 2;  // version 1.0: 2-byte header length
  unsigned char major = 1;
  std::size_t total = header.size() + 1;  // with the final '\n'
  std::size_t pad = kAlign - (prefix + total) % kAlign;
  if (total + pad > 0xffff) {  // only for absurd ranks: version 2.0 has a 4-byte length
    major = 2;
    prefix = kMagicSize + 2 + 4;
    pad = kAlign - (prefix + total) % kAlign;
  }
  header.append(pad, ' ');
  header += '\n';

  write_file_atomically(path, [&](std::ostream& out) {
    out.write(kMagic, kMagicSize);
    const char version[2] = {static_cast<char>(major), 0};
    out.write(version, 2);
    const std::uint32_t length = static_cast<std::uint32_t>(header.size());
    out.write(reinterpret_cast<const char*>(&length), major == 1 ? 2 : 4);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size_bytes()));
  });
}

NpyArray read_npy(const std::string& path) {
  std::error_code ec;
  const std::uint64_t file_size = std::filesystem::file_size(path, ec);
  if (ec) throw Error(path + ": cannot read: " + ec.message());
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open");

  char start[kMagicSize + 2] = {};
  if (file_size < sizeof start || !in.read(start, sizeof start))
    throw Error(path + ": truncated npy file (" + std::to_string(file_size) + " bytes, no magic and version)");
  if (std::memcmp(start, kMagic, kMagicSize) != 0) throw Error(path + ": bad npy magic (not a .npy file)");
  const int major = static_cast<unsigned char>(start[kMagicSize]);
  const int minor = static_cast<unsigned char>(start[kMagicSize + 1]);
  if (major < 1 || major > 3 || minor != 0)
    throw Error(path + ": unsupported npy version " + std::to_string(major) + "." + std::to_string(minor) +
                " (tilevit reads 1.0, 2.0 and 3.0)");

  const std::size_t length_bytes = major == 1 ? 2 : 4;
  unsigned char length_le[4] = {};
  if (!in.read(reinterpret_cast<char*>(length_le), static_cast<std::streamsize>(length_bytes)))
    throw Error(path + ": truncated npy file (no header length)");
  std::uint64_t header_size = 0;
  for (std::size_t i = 0; i < length_bytes; ++i) header_size |= static_cast<std::uint64_t>(length_le[i]) << (8 * i);
  const std::uint64_t data_start = sizeof start + length_bytes + header_size;
  if (header_size > kMaxHeaderBytes)
    throw Error(path + ": npy header length " + std::to_string(header_size) + " is over the limit of " +
                std::to_string(kMaxHeaderBytes) + " bytes");
  if (data_start > file_size)
    throw Error(path + ": truncated npy file (header length " + std::to_string(header_size) + " runs past the end)");
  std::string header(header_size, '\0');
  if (!in.read(header.data(), static_cast<std::streamsize>(header_size)))
    throw Error(path + ": truncated npy file (cannot read the header)");

  std::optional<std::string> descr;
  std::optional<bool> fortran;
  std::optional<std::vector<std::int64_t>> shape;
  HeaderParser(path, header).parse(descr, fortran, shape);
  if (!descr) throw Error(path + ": npy header has no \"descr\"");
  if (!fortran) throw Error(path + ": npy header has no \"fortran_order\"");
  if (!shape) throw Error(path + ": npy header has no \"shape\"");
  std::uint64_t item_size = 0;
  if (*descr == "<f4") {
    item_size = 4;
  } else if (*descr == "<f8") {
    item_size = 8;
  } else if (!descr->empty() && (*descr)[0] == '>') {
    throw Error(path + ": npy \"descr\" '" + excerpt(*descr) + "' is big-endian; tilevit reads '<f4' or '<f8'");
  } else {
    throw Error(path + ": npy \"descr\" '" + excerpt(*descr) + "' is not supported; tilevit reads '<f4' or '<f8'");
  }
  if (*fortran) throw Error(path + ": npy \"fortran_order\" is True; tilevit reads C-order arrays only");

  // Bound everything by the file's real size before allocating.
  std::int64_t elements = 1;
  for (std::int64_t dim : *shape)
    if (__builtin_mul_overflow(elements, dim, &elements))
      throw Error(path + ": npy \"shape\" " + shape_repr(*shape) + " element count overflows int64");
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<std::uint64_t>(elements), item_size, &bytes) ||
      bytes != file_size - data_start)
    throw Error(path + ": npy \"shape\" " + shape_repr(*shape) + " of '" + *descr + "' needs " +
                std::to_string(elements) + " x " + std::to_string(item_size) + " data bytes but the file has " +
                std::to_string(file_size - data_start) + " after the header (size mismatch or truncated)");

  NpyArray array;
  array.shape = *shape;
  array.data.resize(static_cast<std::size_t>(elements));
  if (item_size == 4) {
    if (!in.read(reinterpret_cast<char*>(array.data.data()), static_cast<std::streamsize>(bytes)))
      throw Error(path + ": truncated npy file (cannot read the data)");
  } else {
    std::vector<double> chunk(std::min<std::size_t>(array.data.size(), 1 << 16));
    for (std::size_t done = 0; done < array.data.size();) {
      const std::size_t n = std::min(chunk.size(), array.data.size() - done);
      if (!in.read(reinterpret_cast<char*>(chunk.data()), static_cast<std::streamsize>(n * sizeof(double))))
        throw Error(path + ": truncated npy file (cannot read the data)");
      for (std::size_t i = 0; i < n; ++i) array.data[done + i] = static_cast<float>(chunk[i]);
      done += n;
    }
  }
  return array;
}

}  // namespace tilevit::formats
