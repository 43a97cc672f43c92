#pragma once
// One exception type for every user-facing failure. The message is a single line that
// names the file, field, tile or value at fault; the CLI prints it and exits non-zero.
#include <stdexcept>
#include <string>

namespace tilevit {

// Exit codes of the tilevit executable (documented in README.md).
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,       // the job ran but its check failed (e.g. cosine below threshold)
  kExitUsage = 2,         // bad command line
  kExitBadInput = 3,      // unreadable or invalid input file / value; a model too big for the machine
  kExitResource = 4,      // lock timeout, I/O failure writing outputs
  kExitInternal = 70,     // a bug: invariant violated
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, int exit_code = kExitBadInput)
      : std::runtime_error(message), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

}  // namespace tilevit
