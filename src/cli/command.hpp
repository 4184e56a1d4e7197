#pragma once
/// Table-driven CLI (STYLE.md §11): each command lives in its own cli/cmd_*.cpp and registers
/// itself with GPUPLAN_REGISTER_COMMAND. Commands parse flags into the layer's request struct,
/// call the engine and render; they compute no numbers themselves.
#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace gpuplan::cli {

/// Options every command sees.
struct GlobalOptions {
  std::string gpus_file;  ///< --gpus-file: a gpus.csv overriding the bundled hardware catalog
  std::string db_path;    ///< --db: offer database path (default under $XDG_DATA_HOME/gpuplan/)
  /// Exit code a command asks for when it succeeded with a non-zero answer (plan: 1 = no offer
  /// can run the workload). Errors are thrown, never set here.
  int exit_code = 0;
};

struct Command {
  std::string name;
  std::string description;
  /// Adds the subcommand's flags to `sub` and sets its callback. The callback may throw
  /// gpuplan::Error; main() maps it to a message and exit code.
  std::function<void(CLI::App& sub, GlobalOptions& global)> setup;
};

/// Registers a command; returns true so it can initialise a static.
bool register_command(Command command);
/// All registered commands, sorted by name.
std::vector<Command> registered_commands();

/// Runs the CLI as main() does (used by main.cpp and tests): returns the exit code.
int run(int argc, char** argv);

}  // namespace gpuplan::cli

#define GPUPLAN_CONCAT_INNER(a, b) a##b
#define GPUPLAN_CONCAT(a, b) GPUPLAN_CONCAT_INNER(a, b)
#define GPUPLAN_REGISTER_COMMAND(...) \
  static const bool GPUPLAN_CONCAT(gpuplan_cmd_registered_, __LINE__) = ::gpuplan::cli::register_command(__VA_ARGS__)
