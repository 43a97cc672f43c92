// tilevit: compile Vision Transformers onto a tile processor, run them on a host model of
// the machine, and show where every cycle and byte goes. Subcommands live in cmd_*.cpp.
#include <algorithm>
#include <iostream>
#include <map>

#include "cli/command.hpp"
#include "support/error.hpp"

namespace tilevit::cli {
std::vector<CommandInfo>& command_registry() {
  static std::vector<CommandInfo> registry;
  return registry;
}
}  // namespace tilevit::cli

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
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  try {
    for (auto& [sub, action] : actions)
      if (sub->parsed()) return action();
    return kExitUsage;
  } catch (const Error& e) {
    std::cerr << "tilevit: error: " << e.what() << "\n";
    return e.exit_code();
  } catch (const std::bad_alloc&) {
    std::cerr << "tilevit: error: out of host memory\n";
    return kExitResource;
  } catch (const std::exception& e) {
    std::cerr << "tilevit: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
}
