#pragma once
// A package fixes the model it runs: model flags given next to --package must say what
// the package holds, or the command fails (they were silently ignored before).
#include <string>

#include "cli/model_options.hpp"
#include "compiler/compile.hpp"

namespace tilevit::cli {

// --preset, --layers, --batch, --fp8-scale, --calibrated-scales against the package, and
// --weights: a checkpoint with fewer layers than the package. Error(kExitUsage) naming
// the flag, the value asked and the package's.
void check_model_flags_match(const ModelOptions& model, const compiler::Executable& package,
                             const std::string& package_path);

// Fails (kExitUsage) when `asked` differs from what the package was built with.
void require_same(const std::string& package_path, const std::string& flag, const std::string& asked,
                  const std::string& built);

// A machine of several chips (--machine) runs a pipeline package only: a one-chip
// package next to it is Error(kExitUsage) naming the file, the flag and the chips.
// Nothing for an empty path; a file that is no package fails as opening it says.
void require_pipeline_package(const std::string& package_path, const std::string& machine_option);

}  // namespace tilevit::cli
