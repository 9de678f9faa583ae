// The fuselens-cli subcommands. Each registers itself on the app and, when
// chosen, runs and stores its exit code.
#pragma once

#include <CLI/CLI.hpp>

namespace fuselens::cli {

void addInspectCommand(CLI::App& app, int& exitCode);
void addCompileCommand(CLI::App& app, int& exitCode);
void addRunCommand(CLI::App& app, int& exitCode);
void addCompareCommand(CLI::App& app, int& exitCode);
void addExplainCommand(CLI::App& app, int& exitCode);
void addExportCommand(CLI::App& app, int& exitCode);
void addTuneCommand(CLI::App& app, int& exitCode);
void addDiffCommand(CLI::App& app, int& exitCode);
void addProfileCommand(CLI::App& app, int& exitCode);
void addRenderCommand(CLI::App& app, int& exitCode);
void addBisectCommand(CLI::App& app, int& exitCode);
void addTensorCommand(CLI::App& app, int& exitCode);

}  // namespace fuselens::cli
