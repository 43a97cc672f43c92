#include "package/verified_package.hpp"

#include "compiler/verify.hpp"
#include "support/error.hpp"

namespace tilevit::package {

VerifiedPackage load_verified_package(const std::string& path) { return verify_package(Container::open(path)); }

VerifiedPackage verify_package(const Container& container) {
  VerifiedPackage out{decode_package(container), container.sha256_hex()};
  const compiler::Executable& c = out.contents;
  const auto report = compiler::verify_program(c.machine, c.program, c.bindings, c.tensors, false, 1);
  if (!report.ok())
    throw Error(container.name() + ": not a valid package: " + report.violations.front() + " (" +
                    std::to_string(report.violation_count) + " violation" + (report.violation_count == 1 ? "" : "s") +
                    "; `tilevit verify` lists them)",
                kExitBadInput);
  return out;
}

}  // namespace tilevit::package
