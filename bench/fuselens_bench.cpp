// fuselens-bench: how close the generated CPU kernels come to the machine, in
// one process so every ratio compares runs under the same conditions. Each
// figure is the median of several runs after a warm-up. Rows:
//   STREAM copy / triad (GB/s, the bandwidth references), a fused
//   elementwise chain and a broadcast chain on 16M floats, softmax rows (GB/s
//   and % of copy); MatMul 128x768x3072 and 1024^3 (GFLOP/s and % of OpenBLAS
//   sgemm on the same threads); MatMul+bias+GELU fused vs sgemm followed by a
//   separate compiled epilogue pass; a 3x3 conv 64ch 56x56, NCHW direct vs
//   NCHW8c / NCHW16c after the layout pass (GFLOP/s); compile time per backend step; eager vs
//   compiled per sample model, a transformer encoder block (make_transformer.py)
//   and a small ResNet-style CNN (make_cnn.py, NCHWc and default pipelines);
//   ONNX Runtime via bench/ort_bench.py when `onnxruntime` imports; the graph
//   view's first paint, scope opening, pass stepping and peak memory on
//   generated scoped models (bench_gui.cpp, with the GUI).
// The families live in bench_kernels.cpp, bench_compile.cpp and
// bench_models.cpp; this file reads the flags, prints the host and runs them.
// Usage: fuselens-bench [--quick] [--json out.json] [--threads N] [--only ...]
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>

#include "benchmarks.h"
#include "codegen/target.h"  // hostTarget: Session offers no host facts

extern "C" void openblas_set_num_threads(int);
extern "C" char* openblas_get_corename(void);

using namespace fuselens;
using namespace fuselens::bench;

namespace {

// Returns false on a flag it does not know.
bool parseFlags(int argc, char** argv, std::string& jsonPath) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--quick")
      gQuick = true;
    else if (a == "--json" && i + 1 < argc)
      jsonPath = argv[++i];
    else if (a == "--threads" && i + 1 < argc)
      gThreads = std::atoi(argv[++i]);
    else if (a == "--only" && i + 1 < argc)
      setenv("FUSELENS_BENCH_ONLY", argv[++i], 1);
    else
      return false;
  }
  return true;
}

// OpenBLAS 0.3.21 does not know every AVX-512 CPU and falls back to its AVX2
// (Haswell) kernels; the fair baseline on such a host is its SkylakeX kernel,
// chosen when the library loads, hence the re-exec. An OPENBLAS_CORETYPE
// already in the environment is respected (and printed).
void pickOpenBlasCore(const CpuTarget& t, char** argv) {
  if (t.vectorBits < 512 || std::getenv("OPENBLAS_CORETYPE")) return;
  setenv("OPENBLAS_CORETYPE", "SkylakeX", 1);
  execv("/proc/self/exe", argv);
  std::perror("re-exec with OPENBLAS_CORETYPE failed");
}

void printHost(const CpuTarget& t) {
  gJson["openblas_core"] = openblas_get_corename();
  std::printf("OpenBLAS core: %s\n", openblas_get_corename());
  gJson["host"] = {{"cpu", t.cpu},
                   {"vector_bits", t.vectorBits},
                   {"threads", t.threads},
                   {"bench_threads", gThreads}};
  std::printf("host %s, %d-bit vectors, %d hardware threads; benchmarks on %d threads\n",
              t.cpu.c_str(), t.vectorBits, t.threads, gThreads);
}

}  // namespace

int main(int argc, char** argv) {
  std::string jsonPath = "fuselens_bench.json";
  gThreads = std::max(1, std::min(2, int(std::thread::hardware_concurrency())));
  if (!parseFlags(argc, argv, jsonPath)) {
    std::fprintf(stderr,
                 "usage: fuselens-bench [--quick] [--json out.json] [--threads N] [--only "
                 "stream,ew,softmax,matmul,conv,compile,models,cnn,compile12,gui]\n");
    return 2;
  }
  const CpuTarget& t = hostTarget();
  pickOpenBlasCore(t, argv);
  openblas_set_num_threads(gThreads);
  printHost(t);
  printHeader();
  const char* only = std::getenv("FUSELENS_BENCH_ONLY");
  auto want = [&](const char* s) { return !only || std::strstr(only, s); };
#ifdef FUSELENS_BENCH_GUI
  // First: the GUI's peak-memory row is the process's peak, and what the
  // model rows leave resident (ONNX Runtime sessions, JIT code, malloc's kept
  // heap) would count there however the peak is reset (620 vs 298 MB).
  if (want("gui")) guiRows();
#endif
  if (want("stream") || want("ew") || want("softmax")) stream();
  if (want("ew")) elementwise();
  if (want("softmax")) softmaxRows();
  if (want("matmul") || want("conv")) fmaPeak();
  if (want("matmul")) {
    matmul(128, 768, 3072);
    matmul(1024, 1024, 1024);
  }
  if (want("conv")) convLayout();
  if (want("compile")) compileTimes();
  if (want("models")) models();
  if (want("models") || want("cnn")) cnnModel();
  if (want("compile12")) compile12();
  std::ofstream(jsonPath) << gJson.dump(2) << "\n";
  std::printf("JSON: %s\n", jsonPath.c_str());
}
