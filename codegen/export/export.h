// Export: a compiled graph as files that run without FuseLens.
//
//   <name>.ll          LLVM IR of every kernel, optimized
//   <name>.s / .o      host assembly and a position-independent object (kernels
//                      and the constants they read, prepacked ones included)
//   <name>.h           the C contract: fl_tensor (data, dtype code, shape),
//                      <name>_run(inputs, outputs), <name>_last_error(), the
//                      input/output order, dtypes and shapes
//   <name>_runtime.c   the entry function: checks every input's and output's
//                      dtype and shape (a failed check returns nonzero, the
//                      reason in <name>_last_error()),
//                      lays out intermediates in one arena from the memory plan,
//                      calls the kernels in order; a small pthread pool runs
//                      their parallel loops
//   <name>.so          the two above linked by the system C compiler (`cc`);
//                      only <name>_* symbols are exported
//   <name>.json        the manifest: files, entry, inputs/outputs with dtypes,
//                      kernels with their schedules, memory plan, target CPU
// Any dtype the kernels compile (f32, f64, f16, bf16, i8/u8/i16/i32/i64, bool)
// can be an input or output; dtype codes are ONNX's TensorProto numbers.
// The code targets `cpu`: the host ("native"), or an x86-64 level
// ("x86-64-v2" runs on any CPU with SSE4.2); schedules size vectors and tiles
// for it. Nodes that would need the reference fallback or a driver kernel are
// refused with a sentence.
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
  std::string cc = "cc";       // links the .so; empty: stop after .o/.c/.h
  std::string cpu = "native";  // "native" or x86-64, x86-64-v2, x86-64-v3, x86-64-v4
};

struct ExportResult {
  std::vector<std::string> files;  // paths written, manifest last
};

Expected<ExportResult> exportModel(const Graph& g, const ExportOptions& opts,
                                   const Progress& progress = {}, const CancelToken& cancel = {});

}  // namespace fuselens
