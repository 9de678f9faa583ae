// `fuselens-cli inspect`: what the model is — summary, op histogram,
// diagnostics from import, and the IR text.
#include <iostream>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "core/ir/printer.h"

namespace fuselens::cli {
namespace {

struct InspectArgs {
  std::string model;
  bool noIr = false;
  bool full = false;
};

int runInspect(const InspectArgs& a) {
  Session session;
  if (Status s = session.open(a.model, terminalProgress(), interruptToken()); !s) return fail(s);
  const ImportedModel& m = session.model();
  const Graph& g = m.graph;
  std::cout << "model     " << a.model << "\n";
  std::cout << "producer  " << (m.producer.empty() ? "(unknown)" : m.producer) << "\n";
  std::cout << "ir        " << m.irVersion << "\nopsets   ";
  for (const auto& [domain, version] : m.opsets)
    std::cout << " " << (domain.empty() ? "ai.onnx" : domain) << ":" << version;
  std::cout << "\n";
  for (ValueId v : g.inputs())
    std::cout << "input     " << g.value(v).name << ": " << g.value(v).type.str() << "\n";
  for (ValueId v : g.outputs())
    std::cout << "output    " << g.value(v).name << ": " << g.value(v).type.str() << "\n";
  GraphStats stats = graphStats(g);
  std::cout << "nodes     " << stats.nodes << "\nconstants " << g.constants().size()
            << "\n\nop histogram\n";
  for (const auto& [op, count] : stats.opHistogram)
    std::cout << "  " << count << "  " << op << "\n";
  if (!m.diagnostics.empty()) {
    std::cout << "\ndiagnostics\n";
    for (const Diagnostic& d : m.diagnostics) std::cout << "  " << d.str() << "\n";
  }
  if (!a.noIr) {
    PrintOptions opts;
    if (a.full) opts.elideConstantsOver = -1;
    std::cout << "\n" << printGraph(g, opts);
  }
  return kExitOk;
}

}  // namespace

void addInspectCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<InspectArgs>();
  CLI::App* cmd =
      app.add_subcommand("inspect", "Summarize a model: inputs, outputs, op histogram, IR text");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_flag("--no-ir", args->noIr, "Do not print the IR text");
  cmd->add_flag("--full-constants", args->full,
                "Print every constant element instead of dense<...>");
  cmd->callback([args, &exitCode] { exitCode = runInspect(*args); });
}

}  // namespace fuselens::cli
