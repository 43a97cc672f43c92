#pragma once
// A package as the commands that execute or summarise it take it: opened, decoded and
// verified (compiler/verify.hpp) before anything in it is trusted, so a damaged or crafted
// package is one line and exit 3, never a crash or an internal error later.
#include <string>

#include "package/program_codec.hpp"

namespace tilevit::package {

struct VerifiedPackage {
  compiler::Executable contents;
  std::string sha256;  // hex, of the container
};

// Throws Error(kExitBadInput) naming the file and the first violation.
VerifiedPackage load_verified_package(const std::string& path);
// The same on an opened container: a whole file, or a package nested in another (a
// pipeline's stage, named "<file>: stage.S"); the error names the container.
VerifiedPackage verify_package(const Container& container);

}  // namespace tilevit::package
