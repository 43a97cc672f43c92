#pragma once
// Outputs are written to a temporary name beside the target and renamed into place, so
// a failure never leaves a half-written file under the final name. What the user named
// is respected: a symlink is followed (its target is replaced, the link kept), a path that
// is not a regular file (a device such as /dev/null, a FIFO) is written in place, and "-"
// is standard output. Temporaries are removed on SIGINT/SIGTERM, and those left by a
// killed process (`NAME.tmp.<pid>` of a pid no longer running) are swept by the next
// write into the same directory.
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

// Checks, before any long work, that `path` can be written: an existing directory, a
// missing or unwritable parent directory -> Error(kExitResource) naming the path. "-" passes.
void check_output_writable(const std::string& path);
// The same, for a file the command writes into `created_dir` (e.g. run's --out), which it
// creates first: a path directly in that directory passes while it does not exist yet
// (creating it is checked, and reported, where it is created).
void check_output_writable(const std::string& path, const std::string& created_dir);

// `path` with every symlink of its last component followed (a dangling link resolves to
// the file it names); other paths unchanged.
std::string resolve_output_path(const std::string& path);

// Removes `NAME.tmp.<pid>` files in `directory` whose process no longer runs.
void sweep_stale_temporaries(const std::string& directory);

// Reads a whole file, refusing files larger than `max_bytes`.
std::string read_text_file(const std::string& path, std::size_t max_bytes);

}  // namespace tilevit
