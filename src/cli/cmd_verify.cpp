// tilevit verify: re-check a package's promises independently of the planner.
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/model_options.hpp"
#include "compiler/verify.hpp"
#include "package/program_codec.hpp"
#include "support/error.hpp"

namespace tilevit::cli {
namespace {

struct VerifyCommand {
  std::string path;
  bool json = false;

  CommandAction setup(CLI::App& app) {
    app.add_option("PACKAGE", path, "package file (.tvpkg)")->required();
    app.add_flag("--json", json, "print one JSON object");
    return [this] { return run(); };
  }

  int run() {
    const package::Container container = package::Container::open(path);
    const compiler::Executable contents = package::decode_package(container);
    const auto report = compiler::verify_program(contents.machine, contents.program, contents.bindings, contents.tensors);
    if (json) {
      nlohmann::json j{{"package", path},
                       {"package_sha256", container.sha256_hex()},
                       {"ok", report.ok()},
                       {"violation_count", report.violation_count},
                       {"violations", report.violations},
                       {"allocations", report.allocations},
                       {"kernel_calls", report.kernel_calls},
                       {"transfers", report.transfers},
                       {"bindings", report.bindings}};
      // A violation may quote a label that is not UTF-8 (reported as such): replaced, not fatal.
      std::cout << j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    } else {
      for (const auto& v : report.violations) std::cout << "violation: " << v << "\n";
      std::cout << path << ": " << (report.ok() ? "OK" : "FAILED") << " (" << report.allocations << " allocations, "
                << report.kernel_calls << " kernel calls, " << report.transfers << " transfers, " << report.bindings
                << " bindings checked; " << report.violation_count << " violations)\n";
    }
    return report.ok() ? kExitOk : kExitFailure;
  }
};

VerifyCommand command;
const CommandRegistration registration("verify", "independently re-check a compiled package",
                                       [](CLI::App& app) { return command.setup(app); });

}  // namespace
}  // namespace tilevit::cli
