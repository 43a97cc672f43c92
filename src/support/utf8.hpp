#pragma once
// UTF-8 checks for text read from files: safetensors headers (validated as Rust's reader
// does) and the labels a package carries (printed, and written into JSON viewers).
#include <cstddef>
#include <string_view>

namespace tilevit {

// Strict UTF-8 check (no overlong forms, no surrogates, nothing above U+10FFFF), as Rust's
// str::from_utf8 in the reference reader.
inline bool valid_utf8(std::string_view text, std::size_t* bad_at) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    std::size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      *bad_at = i;
      return false;
    }
    if (i + len > n || p[i + 1] < lo || p[i + 1] > hi) {
      *bad_at = i;
      return false;
    }
    for (std::size_t k = 2; k < len; ++k) {
      if (p[i + k] < 0x80 || p[i + k] > 0xBF) {
        *bad_at = i;
        return false;
      }
    }
    i += len;
  }
  return true;
}

// A label is printable UTF-8: valid, and no control character (U+0000-U+001F, U+007F).
// Returns false with the offset of the first offending byte.
inline bool printable_utf8(std::string_view text, std::size_t* bad_at) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7F) {
      *bad_at = i;
      return false;
    }
  }
  return valid_utf8(text, bad_at);
}

}  // namespace tilevit
