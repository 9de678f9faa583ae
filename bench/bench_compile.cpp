// Compile-time rows: each backend step for MatMul+bias+GELU, and the default
// pipeline plus the backend on a 12-layer transformer encoder (target < 5 s),
// each model opened and optimized through Session.
#include <cstdio>
#include <cstdlib>

#include "benchmarks.h"
#include "session/pipeline_choice.h"

namespace fuselens::bench {
namespace {

// A row for a step that failed: the figure is missing, the note says why.
void failedRow(const std::string& name, const std::string& what, const Status& st) {
  addRow({name, "n/a", 0, 0, "", what + " failed: " + st.message()});
}

}  // namespace

// The compile rows time LLVM itself: a kernel cache warmed by an earlier run
// (or by another row of this one) would hide it.
void withoutKernelCache() { ::setenv("FUSELENS_CACHE", "0", 1); }

void compileTimes() {
  withoutKernelCache();
  TensorData w = randomTensor({768, 3072}, 2), bias = randomTensor({3072}, 3);
  const std::string name = "compile: pass pipeline (MatMul+GELU)";
  Session s;
  if (Status st = s.open(matmulGraph(128, 768, 3072, true, w, bias), "MatMul+GELU"); !st)
    return failedRow(name, "open", st);
  auto t0 = Clock::now();
  if (Status st = s.optimize(pipelineTextForLevel(3)); !st) return failedRow(name, "pipeline", st);
  double pipe = secondsSince(t0);
  if (Status st = compileModule(s); !st) return failedRow(name, "compile", st);
  CompileStats stats = s.compiled()->stats();
  addRow({name, "ms", pipe * 1e3, 0, "", ""});
  addRow({"compile: lower + schedule + pack", "ms", stats.lowerSeconds * 1e3, 0, "", ""});
  addRow({"compile: LLVM IR emit", "ms", stats.llvmEmitSeconds * 1e3, 0, "", ""});
  addRow({"compile: LLVM -O3", "ms", stats.llvmOptimizeSeconds * 1e3, 0, "", ""});
  addRow({"compile: LLVM codegen + JIT link", "ms", stats.llvmCodegenSeconds * 1e3, 0, "", ""});
}

// Default-pipeline compile of a 12-layer encoder, including LLVM (target < 5 s).
void compile12() {
  withoutKernelCache();
  const std::string name = "compile 12-layer encoder";
  std::string path = "/tmp/fuselens_bench_encoder12.onnx";
  if (!writeModel("make_transformer.py", "--layers 12", path)) {
    addRow({name, "n/a", 0, 0, "", "python3 with onnx not available"});
    return;
  }
  Session s;
  auto t0 = Clock::now();
  if (Status st = s.open(path); !st) return failedRow(name, "import", st);
  double timport = secondsSince(t0);
  t0 = Clock::now();
  if (Status st = s.optimize(defaultPipelineText()); !st) return failedRow(name, "pipeline", st);
  double tpipe = secondsSince(t0);
  t0 = Clock::now();
  if (Status st = compileModule(s); !st) return failedRow(name, "compile", st);
  double tcomp = secondsSince(t0);
  const CompiledModule& m = *s.compiled();
  CompileStats st = m.stats();
  char note[256];
  std::snprintf(note, sizeof note,
                "target < 5000 ms; import %.0f ms (not counted); lower+pack %.0f, LLVM %.0f wall "
                "(thread-seconds: emit %.0f, -O3 %.0f, codegen %.0f); %zu kernels, %zu unique",
                timport * 1e3, st.lowerSeconds * 1e3, st.llvmWallSeconds * 1e3,
                st.llvmEmitSeconds * 1e3, st.llvmOptimizeSeconds * 1e3, st.llvmCodegenSeconds * 1e3,
                m.kernels().size(), st.uniqueKernels);
  addRow({name + " (passes+lower+LLVM)", "ms", (tpipe + tcomp) * 1e3, 0, "", note});
}

}  // namespace fuselens::bench
