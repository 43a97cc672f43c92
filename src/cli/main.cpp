// tilevit: compile Vision Transformers onto a tile processor, run them on a host model of
// the machine, and show where every cycle and byte goes. Subcommands live in cmd_*.cpp.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/validators.hpp"
#include "mpi/mpi_world.hpp"
#include "support/error.hpp"

namespace tilevit::cli {
const std::string& examples_of(const std::string& command);  // examples.cpp

std::vector<CommandInfo>& command_registry() {
  static std::vector<CommandInfo> registry;
  return registry;
}
}  // namespace tilevit::cli

namespace {

// An error line is printable text: bytes of a binary file quoted in a parser's message
// (a PNG given as a machine file) become \xNN, and the line is capped.
std::string printable(const std::string& message) {
  std::string out;
  for (unsigned char c : message) {
    if (out.size() >= 400) return out + "...";
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  return out;
}

// One error: the "tilevit: error:" line on stderr and, with --json, a JSON object on
// stdout so that a script reading stdout always gets JSON (under mpirun, rank 0's only:
// an error every rank meets is one object).
int report_error(const std::string& message, int exit_code, bool json, const char* kind = "error") {
  const std::string line = printable(message);
  std::cerr << "tilevit: " << kind << ": " << line << "\n";
  if (json && tilevit::mpi::mpirun_rank() == 0)
    std::cout << nlohmann::json{{"error", line}, {"exit_code", exit_code}}.dump() << "\n";
  return exit_code;
}

// Only `run` (a machine of several chips) and `sweep --mpi` work over MPI ranks; any other
// command under `mpirun -np N` would run N times into the same files.
void refuse_ranks(const std::string& command) {
  const int ranks = tilevit::mpi::mpirun_ranks();
  if (ranks <= 1 || command == "run" || command == "sweep") return;
  throw tilevit::Error("mpirun -np " + std::to_string(ranks) + ": tilevit " + command +
                           " runs in one process (drop mpirun; only run on a machine of several chips, and sweep "
                           "--mpi, use ranks)",
                       tilevit::kExitUsage);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tilevit;
  CLI::App app{"tilevit: Vision Transformers on a spatial, SRAM-only tile processor"};
  app.set_version_flag("--version", "tilevit 0.1.0");
  app.require_subcommand(1);

  auto commands = cli::command_registry();
  std::sort(commands.begin(), commands.end(), [](auto& a, auto& b) { return a.name < b.name; });
  std::map<CLI::App*, cli::CommandAction> actions;
  for (auto& command : commands) {
    CLI::App* sub = app.add_subcommand(command.name, command.description);
    actions[sub] = command.setup(*sub);
    sub->footer(cli::examples_of(command.name));
    for (CLI::App* nested : sub->get_subcommands([](CLI::App*) { return true; }))
      nested->footer(cli::examples_of(command.name));  // profile render/query/diff
  }
  app.footer(cli::examples_of(""));
  cli::reject_empty_values(app);
  bool json = false;
  for (int i = 1; i < argc; ++i) json |= std::strcmp(argv[i], "--json") == 0;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return report_error(std::string(e.what()) + " (see --help)", kExitUsage, json);
  }
  try {
    for (auto& [sub, action] : actions)
      if (sub->parsed()) {
        refuse_ranks(sub->get_name());
        return action();
      }
    return kExitUsage;
  } catch (const Error& e) {
    return report_error(e.what(), e.exit_code(), json);
  } catch (const std::bad_alloc&) {
    return report_error("out of host memory", kExitResource, json);
  } catch (const std::filesystem::filesystem_error& e) {
    // Creating or reading what the user named (an --out that is a file, a read-only place).
    return report_error(e.what(), kExitResource, json);
  } catch (const std::exception& e) {
    return report_error(e.what(), kExitInternal, json, "internal error");
  }
}
