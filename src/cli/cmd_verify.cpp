// tilevit verify: re-check a package's promises independently of the planner. A pipeline
// package (several chips): every stage and its system section, or the one --stage names.
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/model_options.hpp"
#include "cli/stage_package.hpp"
#include "compiler/verify.hpp"
#include "package/program_codec.hpp"
#include "support/error.hpp"
#include "system/pipeline_package.hpp"

namespace tilevit::cli {
namespace {

// One program's checks: its decoded contents and what verify_program found.
struct ProgramCheck {
  compiler::Executable contents;
  compiler::VerifyReport report;
  std::string sha256;  // of its container
};

ProgramCheck check_program(const package::Container& container) {
  ProgramCheck out{package::decode_package(container), {}, container.sha256_hex()};
  out.report = compiler::verify_program(out.contents.machine, out.contents.program, out.contents.bindings,
                                        out.contents.tensors);
  return out;
}

nlohmann::json report_json(const compiler::VerifyReport& report) {
  return {{"ok", report.ok()},
          {"violation_count", report.violation_count},
          {"violations", report.violations},
          {"allocations", report.allocations},
          {"kernel_calls", report.kernel_calls},
          {"transfers", report.transfers},
          {"bindings", report.bindings}};
}

void print_report(const std::string& shown, const compiler::VerifyReport& report, const std::string& violation_prefix) {
  for (const auto& v : report.violations) std::cout << "violation: " << violation_prefix << v << "\n";
  std::cout << shown << ": " << (report.ok() ? "OK" : "FAILED") << " (" << report.allocations << " allocations, "
            << report.kernel_calls << " kernel calls, " << report.transfers << " transfers, " << report.bindings
            << " bindings checked; " << report.violation_count << " violations)\n";
}

struct VerifyCommand {
  std::string path;
  std::optional<std::uint32_t> stage;
  bool json = false;

  CommandAction setup(CLI::App& app) {
    app.add_option("PACKAGE", path, "package file (.tvpkg)")->required();
    add_stage_option(app, stage);
    app.add_flag("--json", json, "print one JSON object");
    return [this] { return run(); };
  }

  int run() {
    const package::Container container = package::Container::open(path);
    const std::uint32_t stages = check_stage_flag(path, container, stage, false);
    if (!system::is_pipeline(container) || stage) return verify_one(container, stages);
    return verify_pipeline(container, stages);
  }

  // A one-chip package, or the stage --stage names (the stage's place in the system too).
  int verify_one(const package::Container& container, std::uint32_t stages) {
    ProgramCheck check;
    if (stage) {
      check = check_program(system::stage_container(container, *stage));
      system::check_pipeline_stage(container, *stage, check.contents);
    } else {
      check = check_program(container);
    }
    const compiler::VerifyReport report = check.report;
    const StagePackage shown{{std::move(check.contents), check.sha256}, container.sha256_hex(), stage, stages};
    if (json) {
      nlohmann::json j = report_json(report);
      shown.describe(j, path);
      // A violation may quote a label that is not UTF-8 (reported as such): replaced, not fatal.
      std::cout << j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    } else {
      print_report(shown.stage ? path + ", " + shown.stage_text() : path, report, "");
    }
    return report.ok() ? kExitOk : kExitFailure;
  }

  // Every stage's program, then (when they all pass) the system section's checks over them.
  int verify_pipeline(const package::Container& container, std::uint32_t stages) {
    std::vector<ProgramCheck> checks;
    bool ok = true;
    for (std::uint32_t s = 0; s < stages; ++s) {
      checks.push_back(check_program(system::stage_container(container, s)));
      ok = ok && checks.back().report.ok();
    }
    if (ok) {  // a stage's place and model are read only off programs that verified
      std::vector<compiler::Executable> executables;
      for (ProgramCheck& c : checks) executables.push_back(std::move(c.contents));
      system::check_pipeline(container, executables);
    }
    if (json) {
      nlohmann::json j{{"package", path}, {"package_sha256", container.sha256_hex()}, {"ok", ok}, {"stages", stages},
                       {"system_checked", ok}, {"stage_reports", nlohmann::json::array()}};
      for (std::uint32_t s = 0; s < stages; ++s) {
        nlohmann::json r = report_json(checks[s].report);
        r["stage"] = s;
        r["stage_sha256"] = checks[s].sha256;
        j["stage_reports"].push_back(std::move(r));
      }
      std::cout << j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    } else {
      for (std::uint32_t s = 0; s < stages; ++s)
        print_report(path + ", " + stage_text(s, stages), checks[s].report, "stage " + std::to_string(s) + ": ");
      std::cout << path << ": " << (ok ? "OK" : "FAILED") << " (pipeline package of " << stages << " stages; system section "
                << (ok ? "checked" : "not checked: a stage failed") << ")\n";
    }
    return ok ? kExitOk : kExitFailure;
  }
};

VerifyCommand command;
const CommandRegistration registration("verify", "independently re-check a compiled package (a pipeline's: every stage)",
                                       [](CLI::App& app) { return command.setup(app); });

}  // namespace
}  // namespace tilevit::cli
