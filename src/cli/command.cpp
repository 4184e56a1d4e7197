#include "cli/command.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <string_view>

#include "util/error.hpp"

namespace gpuplan::cli {
namespace {
std::vector<Command>& registry() {
  static std::vector<Command> commands;
  return commands;
}
}  // namespace

bool register_command(Command command) {
  registry().push_back(std::move(command));
  return true;
}

std::vector<Command> registered_commands() {
  auto out = registry();
  std::sort(out.begin(), out.end(), [](const Command& a, const Command& b) { return a.name < b.name; });
  return out;
}

int run(int argc, char** argv) {
  CLI::App app{"gpuplan: size AI workloads, compare GPU cloud offers, plan the cheapest way to finish"};
  app.require_subcommand(1);
  GlobalOptions global;
  app.add_option("--gpus-file", global.gpus_file, "a gpus.csv that replaces the bundled hardware catalog");
  app.add_option("--db", global.db_path, "offer database: a path, sqlite:PATH or postgresql://USER@HOST/DB (default: $XDG_DATA_HOME/gpuplan/offers.sqlite)")
      ->each([](const std::string& v) {
        // `--db ""` (an unset shell variable) silently used the default store (issue 11).
        if (v.empty())
          throw_invalid("--db", "empty path",
                        "a path, sqlite:PATH or postgresql://USER@HOST/DB (or no --db for the default store)");
      });
  app.set_version_flag("--version", "gpuplan 0.1.0");
  for (const auto& cmd : registered_commands()) {
    CLI::App* sub = app.add_subcommand(cmd.name, cmd.description);
    sub->fallthrough();  // global options (--db, --gpus-file) also work after the subcommand
    cmd.setup(*sub, global);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // A first word that is no command (`gpuplan frob`): CLI11 says "A subcommand is required",
    // which a trial found misleading; name the word and the commands instead.
    if (app.get_subcommands().empty()) {
      for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--db" || arg == "--gpus-file") {
          ++i;  // its value
          continue;
        }
        if (arg.empty() || arg.front() == '-') continue;
        std::vector<std::string> names;
        for (const auto& cmd : registered_commands()) names.push_back(cmd.name);
        fmt::print(stderr, "gpuplan: error: command line: unknown command '{}' (expected: one of {})\n", arg,
                   fmt::join(names, ", "));
        return exit_code(ErrorKind::invalid_input);
      }
    }
    // Flag syntax errors in the one documented format (README "Exit codes").
    fmt::print(stderr, "gpuplan: error: command line: {} (expected: see gpuplan --help or gpuplan COMMAND --help)\n",
               e.what());
    return exit_code(ErrorKind::invalid_input);
  } catch (const Error& e) {
    fmt::print(stderr, "gpuplan: error: {}\n", e.what());
    return exit_code(e.kind());
  } catch (const std::exception& e) {
    fmt::print(stderr, "gpuplan: internal error: {}\n", e.what());
    return exit_code(ErrorKind::internal);
  }
  return global.exit_code;
}

}  // namespace gpuplan::cli
