// `fuselens-cli compile`: run the pipeline (a pass string or -O0..-O3), show
// what each pass did, and emit the optimized IR, the loop IR or the LLVM IR.
// Views of the pass manager's records: --print-ir-after-all/-after-change/
// -before=NAME, --time-passes, --json. `--reproduce FILE` replays the
// reproducer a failing pass wrote (graph text + pipeline), no model needed.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "app/cli/cuda_library_view.h"
#include "core/ir/printer.h"
#include "core/support/atomic_file.h"
#include "session/engines.h"

namespace fuselens::cli {
namespace {

struct CompileArgs {
  std::string model;
  std::vector<std::string> dims, shapes;
  std::string passes;
  int level = -1;
  std::vector<std::string> disabled;
  bool printAfterAll = false;
  bool printAfterChange = false;
  std::vector<std::string> printBefore;
  bool timePasses = false;
  bool json = false;
  std::string reproduce;
  std::string emit;
  std::string output;
  bool noFallback = false;
  std::string precision = "f32";
  std::string sm = "sm_90";  // --emit sass
  std::string target = "cpu";
  CudaRunRequest library;  // --target cuda: --cuda-library, --cuda-library-group
};

PipelineChoice choiceOf(const CompileArgs& a) {
  return PipelineChoice{a.passes, a.level, a.disabled, a.precision};
}

void printWarnings(const std::vector<std::string>& warnings) {
  for (const std::string& w : warnings) std::cerr << "warning: " << w << "\n";
}

void printPassTable(std::ostream& os, const std::vector<Snapshot>& snaps) {
  char line[512];
  std::snprintf(line, sizeof line, "%-28s %-11s %14s %9s  %s\n", "pass", "changed", "nodes", "ms",
                "statistics");
  os << line;
  for (size_t i = 1; i < snaps.size(); ++i) {
    const PassRecord& r = snaps[i].record;
    std::string stats;
    for (const auto& [k, v] : r.stats)
      stats += (stats.empty() ? "" : ", ") + k + " " + std::to_string(v);
    std::string nodes = std::to_string(r.nodesBefore) + " -> " + std::to_string(r.nodesAfter);
    std::snprintf(line, sizeof line, "%-28s %-11s %14s %9.3f  ", r.pass.c_str(),
                  r.changed ? "changed" : "(unchanged)", nodes.c_str(), r.millis);
    os << line << stats << "\n";
  }
}

// LLVM's -time-passes: every pass with its share of the total, slowest first.
void printTimeReport(std::ostream& os, const std::vector<Snapshot>& snaps) {
  std::vector<const PassRecord*> recs;
  double total = 0;
  for (size_t i = 1; i < snaps.size(); ++i) {
    recs.push_back(&snaps[i].record);
    total += snaps[i].record.millis;
  }
  std::stable_sort(recs.begin(), recs.end(),
                   [](auto* a, auto* b) { return a->millis > b->millis; });
  char line[256];
  os << "===-------------------------------------------------------===\n"
     << "                 Pass execution timing report\n"
     << "===-------------------------------------------------------===\n";
  std::snprintf(line, sizeof line, "  Total: %.3f ms\n%10s %7s  %s\n", total, "ms", "%", "pass");
  os << line;
  for (const PassRecord* r : recs) {
    std::snprintf(line, sizeof line, "%10.3f %6.1f%%  %s\n", r->millis,
                  total > 0 ? 100.0 * r->millis / total : 0.0, r->pass.c_str());
    os << line;
  }
}

void printStats(std::ostream& os, const char* label, const GraphStats& st) {
  os << label << std::string(8 - std::min<size_t>(7, std::string(label).size()), ' ') << st.nodes
     << " nodes, " << st.fusedGroups << " fused groups, " << st.kernels << " kernels\n";
}

void printIrViews(std::ostream& os, const CompileArgs& a, const std::vector<Snapshot>& snaps) {
  for (size_t i = 0; i < snaps.size(); ++i) {
    const Snapshot& snap = snaps[i];
    if (i > 0) {
      std::string name = snap.label.substr(0, snap.label.find('{'));
      bool before =
          std::find(a.printBefore.begin(), a.printBefore.end(), name) != a.printBefore.end() ||
          std::find(a.printBefore.begin(), a.printBefore.end(), snap.label) != a.printBefore.end();
      if (before)
        os << "// ----- IR before " << snap.label << " -----\n"
           << printGraph(snaps[i - 1].graph()) << "\n";
    }
    bool after = a.printAfterAll || (a.printAfterChange && (i == 0 || snap.record.changed));
    if (after)
      os << "// ----- IR after " << snap.label
         << (snap.record.changed || i == 0 ? "" : " (unchanged)") << " -----\n"
         << printGraph(snap.graph()) << "\n";
  }
}

nlohmann::json statsJson(const GraphStats& st) {
  return {{"nodes", st.nodes}, {"fused_groups", st.fusedGroups}, {"kernels", st.kernels}};
}

nlohmann::json reportJson(const std::string& source, const std::string& pipeline,
                          const std::vector<Snapshot>& snaps, size_t decisions) {
  nlohmann::json passes = nlohmann::json::array();
  for (size_t i = 1; i < snaps.size(); ++i) {
    const PassRecord& r = snaps[i].record;
    nlohmann::json notes = nlohmann::json::array();
    for (const Diagnostic& d : r.diagnostics)
      notes.push_back({{"severity", d.severity == Severity::Note      ? "note"
                                    : d.severity == Severity::Warning ? "warning"
                                                                      : "error"},
                       {"where", d.where},
                       {"message", d.message}});
    passes.push_back({{"pass", r.pass},
                      {"changed", r.changed},
                      {"nodes_before", r.nodesBefore},
                      {"nodes_after", r.nodesAfter},
                      {"ms", r.millis},
                      {"stats", r.stats},
                      {"notes", notes},
                      {"decisions", r.decisions.size()}});
  }
  return {{"model", source},
          {"pipeline", pipeline},
          {"passes", passes},
          {"before", statsJson(graphStats(snaps.front().graph()))},
          {"after", statsJson(graphStats(snaps.back().graph()))},
          {"decisions", decisions}};
}

// Everything but --emit: the views of the pass records, on `os`; `rows` with
// --target cuda (`why` when there is none).
void report(std::ostream& os, const CompileArgs& a, const std::string& source,
            const std::string& pipeline, const std::vector<Snapshot>& snaps, size_t decisions,
            const std::vector<CudaLibraryRow>* rows = nullptr, const std::string& why = {}) {
  if (a.json) {
    nlohmann::json j = reportJson(source, pipeline, snaps, decisions);
    if (rows) j["cuda_library"] = cudaLibraryRowsJson(*rows);
    os << j.dump(2) << "\n";
    return;
  }
  printIrViews(os, a, snaps);
  printPassTable(os, snaps);
  if (a.timePasses) printTimeReport(os, snaps);
  printStats(os, "before", graphStats(snaps.front().graph()));
  printStats(os, "after", graphStats(snaps.back().graph()));
  if (rows) printCudaLibraryRows(os, a.library.library, *rows, why);
}

int runReproduce(const CompileArgs& a) {
  std::vector<std::string> warnings;
  auto replay =
      replayReproducer(a.reproduce, choiceOf(a), &warnings, terminalProgress(), interruptToken());
  printWarnings(warnings);
  if (!replay) return fail(replay.status());
  report(std::cout, a, a.reproduce, replay->pipeline, replay->snapshots, replay->decisions);
  return kExitOk;
}

Session::CodeKind codeKindOf(const std::string& emit) {
  if (emit == "loops") return Session::CodeKind::LoopIr;
  if (emit == "llvm") return Session::CodeKind::LlvmIr;
  if (emit == "asm") return Session::CodeKind::Asm;
  if (emit == "cuda") return Session::CodeKind::CudaC;
  if (emit == "ptx" || emit == "sass") return Session::CodeKind::Ptx;
  return Session::CodeKind::Ir;
}

int runCompile(const CompileArgs& a) {
  if (a.json && !a.emit.empty() && a.output.empty())
    return fail(Status::error(
        "--json and --emit both print to stdout; write the emitted text with -o", "--json"));
  if (Status st = checkCudaLibraryArgs(a.library, a.target == "cuda", "--target cuda"); !st)
    return fail(st);
  if (!a.reproduce.empty()) return runReproduce(a);
  if (a.model.empty())
    return fail(Status::error("a model file (or --reproduce FILE) is required", "compile"));
  std::vector<std::string> warnings;
  auto pipeline = resolvePipeline(choiceOf(a), defaultPipelineText(), &warnings);
  printWarnings(warnings);
  if (!pipeline) return fail(pipeline.status());
  Session session;
  if (Status s = openAndOptimize(session, a.model, *pipeline, a.dims, a.shapes); !s) return fail(s);
  std::string emitted;
  if (!a.emit.empty()) {
    Session::CodeKind kind = codeKindOf(a.emit);
    bool compiles = kind == Session::CodeKind::LoopIr || kind == Session::CodeKind::LlvmIr ||
                    kind == Session::CodeKind::Asm;
    if (compiles) {
      CompileOptions copts;
      copts.fallback = !a.noFallback;
      if (Status s = session.compile(copts, terminalProgress(), interruptToken()); !s)
        return fail(s);
      for (const std::string& note : session.kernelNotes()) std::cerr << "note: " << note << "\n";
      std::cerr << "compiled: " << session.compileSummary() << "\n";
    }
    // Loop IR, LLVM IR and assembly name each kernel's origins (`// from: <onnx nodes>`).
    auto code = session.annotatedCode(kind, terminalProgress(), interruptToken());
    if (!code) return fail(code.status());
    emitted = std::move(code->text);
    if (a.emit == "sass") {
      auto sass = sassForPtx(emitted, a.sm);
      if (!sass) return fail(sass.status());
      emitted = std::move(*sass);
    }
  }
  std::optional<std::vector<CudaLibraryRow>> rows;
  std::string noRows;  // what an empty table says
  if (a.target == "cuda") {
    noRows = cudaOffloadRefusal(session);
    if (noRows.empty()) noRows = "no MatMul/Gemm group runs as a kernel of its own";
    auto r = cudaLibraryRows(session, a.library, terminalProgress(), interruptToken());
    if (!r) return fail(r.status());
    rows = std::move(*r);
  }
  bool emitToStdout = !a.emit.empty() && a.output.empty();
  if (!a.output.empty()) {
    if (Status s = writeFileAtomically(a.output, emitted); !s) return fail(s);
  } else if (emitToStdout) {
    std::cout << emitted;  // stdout carries only the emitted text, for pipes
  }
  bool views = a.printAfterAll || a.printAfterChange || !a.printBefore.empty() || a.timePasses ||
               a.json || rows;
  if (emitToStdout && !views) return kExitOk;
  report(emitToStdout ? std::cerr : std::cout, a, a.model, *pipeline, session.snapshots(),
         session.decisions().size(), rows ? &*rows : nullptr, noRows);
  return kExitOk;
}

}  // namespace

void addCompileCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<CompileArgs>();
  CLI::App* cmd =
      app.add_subcommand("compile", "Run the pass pipeline and emit IR, loop IR or LLVM IR");
  cmd->add_option("model", args->model, "ONNX model file (not needed with --reproduce)");
  cmd->add_option("--passes", args->passes,
                  "Pipeline string, e.g. 'const-fold,cse,simplify,dce,fuse-ops{max-ops=8}' "
                  "(default: -O2: cleanups, layout (block: the CPU's vector width), fuse-patterns, "
                  "fuse-ops{max-ops=12})");
  addPrecisionOption(cmd, args->precision);
  cmd->add_option("-O", args->level,
                  "Default pipeline of an optimization level: -O0, -O1, -O2 (default), -O3")
      ->check(CLI::Range(0, 3));
  cmd->add_option("--disable-pass", args->disabled,
                  "Drop every pass with this name from the pipeline (repeatable)");
  cmd->add_flag("--print-ir-after-all", args->printAfterAll, "Print the IR after every pass");
  cmd->add_flag("--print-ir-after-change", args->printAfterChange,
                "Print the IR after every pass that changed it");
  cmd->add_option("--print-ir-before", args->printBefore,
                  "Print the IR before each run of pass NAME (repeatable)");
  cmd->add_flag("--time-passes", args->timePasses, "Print a timing report, slowest pass first");
  cmd->add_flag("--json", args->json, "Print the pass report as JSON");
  cmd->add_option("--reproduce", args->reproduce, "Replay a reproducer written by a failing pass");
  addShapeOptions(cmd, args->dims, args->shapes);
  cmd->add_option("--emit", args->emit,
                  "Print ir (optimized graph), loops (loop IR), llvm (LLVM IR), asm (x86 "
                  "assembly), cuda (CUDA C) "
                  "ptx (through NVRTC) or sass (ptxas for --sm, listed by cuobjdump or nvdisasm)")
      ->check(CLI::IsMember({"ir", "loops", "llvm", "asm", "cuda", "ptx", "sass"}));
  cmd->add_option("--sm", args->sm, "Architecture of --emit sass (default sm_90)");
  cmd->add_option("--target", args->target,
                  "cpu (default) or cuda: also report per MatMul/Gemm group whether cuBLASLt or "
                  "the generated kernel runs it, with the epilogue or why (manifest.json's words)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  addCudaLibraryOptions(cmd, args->library, "--target cuda");
  cmd->add_option("-o,--output", args->output, "Write the --emit text to this file (atomically)");
  cmd->add_flag(
      "--no-fallback", args->noFallback,
      "With --emit loops/llvm/asm: fail on ops without code generation instead of running them as "
      "the reference fallback");
  cmd->callback([args, &exitCode] { exitCode = runCompile(*args); });
}

}  // namespace fuselens::cli
