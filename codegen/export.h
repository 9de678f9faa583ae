// Export: a compiled graph as files that run without FuseLens.
//
//   <name>.ll          LLVM IR of every kernel, optimized
//   <name>.s / .o      host assembly and a position-independent object (kernels
//                      and the constants they read, prepacked ones included)
//   <name>.h           the C contract: fl_tensor, <name>_run(inputs, outputs),
//                      the input/output order, dtypes and shapes
//   <name>_runtime.c   the entry function: checks every input and output shape,
//                      lays out intermediates in one arena from the memory plan,
//                      calls the kernels in order; a small pthread pool runs
//                      their parallel loops
//   <name>.so          the two above linked by the system C compiler (`cc`);
//                      only <name>_* symbols are exported
//   <name>.json        the manifest: files, entry, inputs/outputs, kernels with
//                      their schedules, memory plan, target CPU
// Every file is written to a temporary name and renamed into place.
#pragma once

#include <string>
#include <vector>

#include "codegen/compiler.h"

namespace fuselens {

struct ExportOptions {
  std::string outDir;
  std::string name = "model";  // file base name and C prefix; made a C identifier
  CompileOptions compile;
  std::string cc = "cc";  // links the .so; empty: stop after .o/.c/.h
};

struct ExportResult {
  std::vector<std::string> files;  // paths written, manifest last
};

Expected<ExportResult> exportModel(const Graph& g, const ExportOptions& opts,
                                   const Progress& progress = {}, const CancelToken& cancel = {});

}  // namespace fuselens
