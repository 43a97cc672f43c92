#pragma once
// Subcommand registry: each cmd_*.cpp registers itself with a static CommandRegistration,
// so adding a command touches only its own file.
#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace tilevit::cli {

// `setup` adds options to `sub` and returns the action to run after parsing; the action
// returns the process exit code. It throws tilevit::Error for bad input.
using CommandAction = std::function<int()>;
using CommandSetup = std::function<CommandAction(CLI::App& sub)>;

struct CommandInfo {
  std::string name;
  std::string description;
  CommandSetup setup;
};

std::vector<CommandInfo>& command_registry();

struct CommandRegistration {
  CommandRegistration(std::string name, std::string description, CommandSetup setup) {
    command_registry().push_back({std::move(name), std::move(description), std::move(setup)});
  }
};

}  // namespace tilevit::cli
