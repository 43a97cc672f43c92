// tilevit machine: prints a machine description (default: the built-in C600) in canonical
// text or JSON, with derived figures.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "support/error.hpp"
#include "target/machine.hpp"
#include "target/system.hpp"

namespace tilevit::cli {
namespace {

struct MachineCommand {
  std::string machine_path;
  bool json = false;

  CommandAction setup(CLI::App& app) {
    app.add_option("--machine", machine_path,
                   "machine description file or embedded name (" + target::builtin_machine_names() +
                       "; default: the built-in C600)");
    app.add_flag("--json", json, "print one JSON object (with a \"derived\" member) instead of text");
    return [this] { return run(); };
  }

  int run() {
    const target::MachineDescription m = target::machine_from_option(machine_path);
    if (json) {
      std::cout << target::to_json(m).dump(1) << "\n";
      return kExitOk;
    }
    // Canonical text first (it parses back), derived figures after as comments.
    std::cout << target::to_text(m);
    const double total = static_cast<double>(m.tiles) * m.sram_size;
    std::printf("\n# derived\n");
    std::printf("# total SRAM: %.0f B (%.1f MiB)\n", total, total / (1 << 20));
    std::printf("# free per tile: %u B (%u B when profiling)\n", m.free_bytes_per_tile(false),
                m.free_bytes_per_tile(true));
    std::printf("# peak: FP32 %.1f, FP16 %.1f, FP8 %.1f TFLOP/s\n", target::peak_flops(m, m.flop_per_cycle_fp32) * 1e-12,
                target::peak_flops(m, m.flop_per_cycle_fp16) * 1e-12, target::peak_flops(m, m.flop_per_cycle_fp8) * 1e-12);
    std::printf("# exchange: %.1f GB/s per tile each direction, %.1f TB/s chip receive\n",
                m.exchange_receive_bytes_per_cycle * static_cast<double>(m.clock_hz) * 1e-9,
                m.exchange_receive_bytes_per_cycle * static_cast<double>(m.clock_hz) * m.tiles * 1e-12);
    if (m.system.chips > 1) print_system(m);
    return kExitOk;
  }

  static void print_system(const target::MachineDescription& m) {
    std::printf("# system: %u chips on a line, %.1f MiB SRAM in all, FP8 peak %.1f TFLOP/s in all\n", m.system.chips,
                double(m.tiles) * m.sram_size * m.system.chips / (1 << 20),
                target::peak_flops(m, m.flop_per_cycle_fp8) * m.system.chips * 1e-12);
    for (const auto& l : m.system.links)
      std::printf("# link %u-%u: %.2f GB/s each way, latency %u cycles (uncalibrated: no measured figure)\n", l.from, l.to,
                  double(l.bytes_per_second) * 1e-9, l.latency_cycles);
  }
};

MachineCommand command;
const CommandRegistration registration("machine", "print a machine description and derived figures",
                                       [](CLI::App& app) { return command.setup(app); });

}  // namespace
}  // namespace tilevit::cli
