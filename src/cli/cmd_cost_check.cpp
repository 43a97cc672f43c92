// tilevit cost-check: compares the kernel cost model with measured cycle counts, and fits
// the [costs] coefficients of a kernel generation to them (--fit). It reports and does not
// judge: exit 0 whenever the input is valid, 3 when it is not.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "support/atomic_file.hpp"
#include "support/error.hpp"
#include "target/calibration.hpp"
#include "target/cost_fit.hpp"
#include "target/machine.hpp"

namespace tilevit::cli {
namespace {

constexpr std::size_t kMaxMeasurementBytes = 4 << 20;

nlohmann::json dims_json(std::span<const std::string_view> names, std::span<const std::uint64_t> dims) {
  nlohmann::json out = nlohmann::json::object();
  for (std::size_t i = 0; i < names.size() && i < dims.size(); ++i) out[std::string(names[i])] = dims[i];
  return out;
}

std::string dims_text(std::span<const std::uint64_t> dims) {
  std::string s;
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return s;
}

struct CostCheckCommand {
  std::string measurements_path, machine_option, generation;
  bool json = false, fit = false;

  CommandAction setup(CLI::App& app) {
    app.add_option("FILE", measurements_path,
                   "measurements: kernels.json (dated hardware measurements) or the calibration.json format")
        ->required();
    app.add_option("--machine", machine_option,
                   "machine description file or embedded name c600, c600-2026-09-13, test16 (default: c600)");
    app.add_flag("--fit", fit, "fit the [costs] coefficients of a kernel generation to FILE (kernels.json format)");
    app.add_option("--generation", generation, "with --fit: the kernel generation, a date (default: the machine's)");
    app.add_flag("--json", json, "print one JSON object instead of text");
    app.footer(
        "Examples:\n"
        "  tilevit cost-check tests/fixtures/kernels.json                      per-kind errors, C600 (2026-09-11)\n"
        "  tilevit cost-check tests/fixtures/kernels.json --machine c600-2026-09-13\n"
        "  tilevit cost-check tests/fixtures/kernels.json --fit --generation 2026-09-13   print [costs]\n"
        "  tilevit cost-check tests/fixtures/calibration.json                  the older 20-point format");
    return [this] { return run(); };
  }

  int run() {
    const target::MachineDescription machine = target::machine_from_option(machine_option);
    const std::string text = read_text_file(measurements_path, kMaxMeasurementBytes);
    if (!generation.empty() && !fit) throw Error("--generation needs --fit", kExitUsage);
    if (!target::is_kernel_measurements_format(text)) {
      if (fit) throw Error(measurements_path + ": --fit needs the kernels.json format (entries with a date)");
      return print_flat(machine, target::check_costs(machine, target::parse_calibration(text, measurements_path)));
    }
    const target::MeasurementCatalog catalog =
        target::build_catalog(target::parse_kernel_measurements(text, measurements_path));
    if (fit) return print_fit(machine, catalog);
    return print_catalog(machine, target::check_catalog(machine, catalog), catalog);
  }

  int print_fit(const target::MachineDescription& machine, const target::MeasurementCatalog& catalog) const {
    const std::string g = generation.empty() ? machine.costs.generation : generation;
    if (g.empty()) throw Error("--fit: the machine names no generation; give --generation YYYY-MM-DD", kExitUsage);
    const target::GenerationFit result = target::fit_generation(catalog, g);
    if (!json) {
      std::cout << target::costs_section_text(machine.costs, result);
      return kExitOk;
    }
    nlohmann::json formulas = nlohmann::json::array();
    for (const auto& f : result.formulas) {
      nlohmann::json coefficients = nlohmann::json::object(), points = nlohmann::json::array();
      for (std::size_t i = 0; i < f.coefficients.size(); ++i)
        coefficients[std::string(target::formula_keys(f.formula)[i])] = f.coefficients[i];
      for (const auto* p : f.points) points.push_back(p->index);
      formulas.push_back({{"formula", target::to_string(f.formula)},
                          {"coefficients", coefficients},
                          {"points", points},
                          {"method", f.method}});
    }
    std::cout << nlohmann::json{{"generation", g}, {"formulas", formulas}}.dump(1) << "\n";
    return kExitOk;
  }

  int print_catalog(const target::MachineDescription& machine, const target::CatalogReport& report,
                    const target::MeasurementCatalog& catalog) const {
    if (json) {
      nlohmann::json kinds = nlohmann::json::array(), skipped = nlohmann::json::array();
      for (const auto& kind : report.kinds) {
        nlohmann::json points = nlohmann::json::array();
        for (const auto& p : kind.points) {
          const auto& m = catalog.measurements[p.point->index];
          const auto names = target::formula_dims(p.point->formula);
          points.push_back({{"index", p.point->index}, {"kernel", m.kernel}, {"date", m.date_text},
                            {"from_note", p.point->from_note}, {"use", target::to_string(p.point->use)},
                            {"why", p.point->why}, {"dims", dims_json(names, p.point->dims)},
                            {"measured", p.point->cycles}, {"predicted", p.predicted}, {"error_percent", p.error_percent}});
        }
        kinds.push_back({{"kind", kind.kind}, {"fitted", kind.fitted}, {"held_out", kind.held_out},
                         {"median_abs_error", kind.median_abs_error_percent},
                         {"max_abs_error", kind.max_abs_error_percent}, {"points", points}});
      }
      for (const auto& n : catalog.not_modelled)
        skipped.push_back({{"index", n.index}, {"kernel", catalog.measurements[n.index].kernel},
                           {"cycles", catalog.measurements[n.index].cycles}, {"reason", n.reason}});
      const nlohmann::json out = {{"machine", machine.name}, {"generation", report.generation},
                                  {"kinds", kinds},          {"other_generations", report.other_generations},
                                  {"not_modelled", skipped}};
      std::cout << out.dump(1) << "\n";
      return kExitOk;
    }
    std::printf("machine %s, kernel generation %s\n\n", machine.name.c_str(),
                report.generation.empty() ? "(none: every generation's points)" : report.generation.c_str());
    std::printf("%-14s | %6s | %4s | %8s | %8s\n", "kind", "fitted", "held", "median %", "max %");
    for (const auto& kind : report.kinds)
      std::printf("%-14s | %6zu | %4zu | %8.2f | %8.2f\n", kind.kind.c_str(), kind.fitted, kind.held_out,
                  kind.median_abs_error_percent, kind.max_abs_error_percent);
    std::printf("\n%-5s %-14s %-44s %-17s %-11s %8s %9s %8s\n", "entry", "kind", "kernel", "date", "dims", "measured",
                "predicted", "error %");
    for (const auto& kind : report.kinds)
      for (const auto& p : kind.points) {
        const auto& m = catalog.measurements[p.point->index];
        std::printf("%-5zu %-14s %-44.44s %-17s %-11s %8llu %9llu %+8.2f %s%s\n", p.point->index, kind.kind.c_str(),
                    m.kernel.c_str(), (p.point->from_note ? m.date_text + " (old) note" : m.date_text).c_str(),
                    dims_text(p.point->dims).c_str(), static_cast<unsigned long long>(p.point->cycles),
                    static_cast<unsigned long long>(p.predicted), p.error_percent,
                    std::string(target::to_string(p.point->use)).c_str(),
                    p.point->why.empty() ? "" : (": " + p.point->why).c_str());
      }
    std::printf("\n%zu modelled points of other generations not compared.\nNot modelled (%zu):\n",
                report.other_generations, catalog.not_modelled.size());
    for (const auto& n : catalog.not_modelled)
      std::printf("%-5zu %-44.44s %8llu  %s\n", n.index, catalog.measurements[n.index].kernel.c_str(),
                  static_cast<unsigned long long>(catalog.measurements[n.index].cycles), n.reason.c_str());
    return kExitOk;
  }

  int print_flat(const target::MachineDescription& machine, const target::CostCheckReport& report) const {
    if (json) {
      nlohmann::json entries = nlohmann::json::array();
      for (const auto& e : report.entries) {
        const auto& call = e.measurement.call;
        nlohmann::json entry = {{"kernel", target::to_string(call.kernel)},
                                {"dims", dims_json(target::dim_names(call.kernel), call.dims)},
                                {"measured", e.measurement.cycles},
                                {"predicted", e.predicted},
                                {"error_percent", e.error_percent}};
        if (call.kernel == target::Kernel::gemm) entry["precision"] = target::to_string(call.precision);
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
const CommandRegistration registration("cost-check", "compare the kernel cost model with measured cycle counts; fit [costs]",
                                       [](CLI::App& app) { return command.setup(app); });

}  // namespace
}  // namespace tilevit::cli
