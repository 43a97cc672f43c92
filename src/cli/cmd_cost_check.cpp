// tilevit cost-check: compares the kernel cost model with measured cycle counts. It reports
// and does not judge: exit 0 whenever the input is valid, 3 when it is not.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "support/error.hpp"
#include "target/calibration.hpp"
#include "target/machine.hpp"

namespace tilevit::cli {
namespace {

struct CostCheckCommand {
  std::string measurements_path, machine_path;
  bool json = false;

  CommandAction setup(CLI::App& app) {
    app.add_option("FILE", measurements_path, "measurements in the format of calibration.json")->required();
    app.add_option("--machine", machine_path, "machine description file (default: the built-in C600)");
    app.add_flag("--json", json, "print one JSON object instead of a table");
    return [this] { return run(); };
  }

  int run() {
    const target::MachineDescription machine =
        machine_path.empty() ? target::c600() : target::load_machine(machine_path);
    const auto report = target::check_costs(machine, target::load_calibration(measurements_path));
    if (json) {
      nlohmann::json entries = nlohmann::json::array();
      for (const auto& e : report.entries) {
        nlohmann::json dims;
        const auto names = target::dim_names(e.measurement.call.kernel);
        for (std::size_t i = 0; i < names.size(); ++i) dims[std::string(names[i])] = e.measurement.call.dims[i];
        nlohmann::json entry = {{"kernel", target::to_string(e.measurement.call.kernel)},
                                {"dims", dims},
                                {"measured", e.measurement.cycles},
                                {"predicted", e.predicted},
                                {"error_percent", e.error_percent}};
        if (e.measurement.call.kernel == target::Kernel::gemm)
          entry["precision"] = target::to_string(e.measurement.call.precision);
        entries.push_back(entry);
      }
      const nlohmann::json out = {{"machine", machine.name},
                                  {"entries", entries},
                                  {"median_abs_error", report.median_abs_error_percent},
                                  {"max_abs_error", report.max_abs_error_percent}};
      std::cout << out.dump(1) << "\n";
      return kExitOk;
    }
    std::printf("%-14s | %-26s | %10s | %10s | %8s\n", "kernel", "dims", "measured", "predicted", "error %");
    std::printf("%s\n", std::string(14 + 26 + 10 + 10 + 8 + 12, '-').c_str());
    for (const auto& e : report.entries)
      std::printf("%-14s | %-26s | %10llu | %10llu | %+8.2f\n",
                  std::string(target::to_string(e.measurement.call.kernel)).c_str(),
                  target::describe(e.measurement.call).c_str(),
                  static_cast<unsigned long long>(e.measurement.cycles), static_cast<unsigned long long>(e.predicted),
                  e.error_percent);
    std::printf("median abs error %.2f%%, max abs error %.2f%% over %zu measurements\n",
                report.median_abs_error_percent, report.max_abs_error_percent, report.entries.size());
    return kExitOk;
  }
};

CostCheckCommand command;
const CommandRegistration registration("cost-check", "compare the kernel cost model with measured cycle counts",
                                       [](CLI::App& app) { return command.setup(app); });

}  // namespace
}  // namespace tilevit::cli
