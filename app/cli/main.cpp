// fuselens-cli: the headless face of FuseLens. Every subcommand drives the
// same Session the GUI drives.
#include <CLI/CLI.hpp>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{
      "FuseLens: import an ONNX model, optimize and fuse it, compile the kernels "
      "with LLVM, and compare every tensor with an eager reference."};
  app.require_subcommand(1);
  int exitCode = 0;
  fuselens::cli::addInspectCommand(app, exitCode);
  fuselens::cli::addCompileCommand(app, exitCode);
  fuselens::cli::addRunCommand(app, exitCode);
  fuselens::cli::addCompareCommand(app, exitCode);
  fuselens::cli::addExplainCommand(app, exitCode);
  fuselens::cli::addExportCommand(app, exitCode);
  fuselens::cli::addTuneCommand(app, exitCode);
  fuselens::cli::addDiffCommand(app, exitCode);
  fuselens::cli::addProfileCommand(app, exitCode);
  fuselens::cli::addRenderCommand(app, exitCode);
  fuselens::cli::addBisectCommand(app, exitCode);
  fuselens::cli::addTensorCommand(app, exitCode);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : fuselens::cli::kExitError;
  }
  return exitCode;
}
