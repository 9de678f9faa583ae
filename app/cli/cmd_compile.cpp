// `fuselens-cli compile`: run the pipeline, show what each pass did, and emit
// the optimized IR, the loop IR or the LLVM IR.
#include <cstdio>
#include <fstream>
#include <iostream>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "core/ir/printer.h"
#include "core/support/atomic_file.h"

namespace fuselens::cli {
namespace {

struct CompileArgs {
  std::string model;
  std::string passes = defaultPipeline();
  bool printAfterAll = false;
  std::string emit;
  std::string output;
};

void printPassTable(const Session& s) {
  std::printf("%-28s %-10s %14s %9s  %s\n", "pass", "changed", "nodes", "ms", "statistics");
  for (size_t i = 1; i < s.snapshots().size(); ++i) {
    const PassRecord& r = s.snapshots()[i].record;
    std::string stats;
    for (const auto& [k, v] : r.stats) stats += (stats.empty() ? "" : ", ") + k + " " + std::to_string(v);
    std::string nodes = std::to_string(r.nodesBefore) + " -> " + std::to_string(r.nodesAfter);
    std::printf("%-28s %-10s %14s %9.3f  %s\n", r.pass.c_str(), r.changed ? "changed" : "(unchanged)",
                nodes.c_str(), r.millis, stats.c_str());
  }
}

void printStats(const char* label, const GraphStats& st) {
  std::printf("%-7s %zu nodes, %zu fused groups, %zu kernels\n", label, st.nodes, st.fusedGroups, st.kernels);
}

int runCompile(const CompileArgs& a) {
  Session session;
  if (Status s = openAndOptimize(session, a.model, a.passes); !s) return fail(s);
  std::string emitted;
  if (a.emit == "ir") {
    emitted = printGraph(session.finalGraph());
  } else if (a.emit == "loops" || a.emit == "llvm") {
    if (Status s = session.compile({}, terminalProgress(), interruptToken()); !s) return fail(s);
    emitted = a.emit == "loops" ? session.compiled()->loopIrText() : session.compiled()->llvmIrText();
  }
  if (!a.output.empty()) {
    if (Status s = writeFileAtomically(a.output, emitted); !s) return fail(s);
  } else if (!a.emit.empty()) {
    std::cout << emitted;
    return kExitOk;  // stdout carries only the emitted text, for pipes
  }
  if (a.printAfterAll)
    for (const Snapshot& snap : session.snapshots())
      std::cout << "// ----- IR after " << snap.label << (snap.record.changed || snap.label == "import" ? "" : " (unchanged)")
                << " -----\n" << printGraph(snap.graph) << "\n";
  printPassTable(session);
  printStats("before", graphStats(session.original()));
  printStats("after", graphStats(session.finalGraph()));
  return kExitOk;
}

}  // namespace

void addCompileCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<CompileArgs>();
  CLI::App* cmd = app.add_subcommand("compile", "Run the pass pipeline and emit IR, loop IR or LLVM IR");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("--passes", args->passes, "Pipeline string, e.g. 'dce,fuse-ops{max-ops=8}'")
      ->capture_default_str();
  cmd->add_flag("--print-ir-after-all", args->printAfterAll, "Print the IR after every pass");
  cmd->add_option("--emit", args->emit, "Print ir (optimized graph), loops (loop IR) or llvm (LLVM IR)")
      ->check(CLI::IsMember({"ir", "loops", "llvm"}));
  cmd->add_option("-o,--output", args->output, "Write the --emit text to this file (atomically)");
  cmd->callback([args, &exitCode] { exitCode = runCompile(*args); });
}

}  // namespace fuselens::cli
