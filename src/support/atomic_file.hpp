#pragma once
// Outputs are written to a temporary name beside the target and renamed into place, so
// a failure never leaves a half-written file under the final name.
#include <cstddef>
#include <functional>
#include <ostream>
#include <span>
#include <string>

namespace tilevit {

// Calls `write` with a binary stream opened on `path`.tmp.<pid>, then renames it to
// `path`. On any exception or stream failure the temporary is removed and an Error
// naming `path` is thrown.
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write);

void write_bytes_atomically(const std::string& path, std::span<const std::byte> bytes);
void write_text_atomically(const std::string& path, const std::string& text);

// Reads a whole file, refusing files larger than `max_bytes`.
std::string read_text_file(const std::string& path, std::size_t max_bytes);

}  // namespace tilevit
