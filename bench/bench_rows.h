// What every benchmark family of fuselens-bench shares: the run settings, the
// result table (stdout and JSON), the timing helpers, and the one way a
// benchmark gets compiled code, through Session (open or open(Graph), optimize,
// compile). Timing needs the CompiledModule itself (runInto with preallocated
// outputs, profileKernels), which Session::compiled() hands out.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "session/session.h"

namespace fuselens::bench {

// Run settings, from the command line.
extern int gThreads;
extern bool gQuick;
// STREAM copy GB/s (0 until the stream rows ran) and the measured FMA peak in
// GFLOP/s of gThreads threads (0 until measured): what later rows divide by.
extern double gCopy;
extern double gPeak;
// Everything addRow printed, plus the host facts main adds.
extern nlohmann::json gJson;

struct Row {
  std::string name, metric;
  double value = 0, reference = 0;  // reference: what the ratio divides by
  std::string refName;
  std::string note;
};
void printHeader();
void addRow(const Row& r);
// "; 62% of the measured FMA peak", or nothing before the peak is measured.
std::string ofPeak(double gflops);

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t0);
// Median seconds of `runs` calls after one warm-up call.
double medianSeconds(const std::function<void()>& f, int runs);
// Splits [0, n) over gThreads std::threads (the STREAM reference and the
// separate epilogue pass use the same thread count as the kernels).
void parallelRange(int64_t n, const std::function<void(int64_t, int64_t)>& f);

// Runs the model generator bench/<script> (python3 with onnx) with `args` and
// `--out out`; false when it fails, as it does without onnx.
bool writeModel(const std::string& script, const std::string& args, const std::string& out);

TensorData randomTensor(const std::vector<int64_t>& shape, uint32_t seed);
TensorType f32(const std::vector<int64_t>& shape);
// A rank-0 f32 constant.
ValueId scalar(Graph& g, float v, const std::string& name);

// Compiles the session's final graph. FUSELENS_BENCH_DUMP=dir writes each
// module's loop IR and LLVM IR.
Status compileModule(Session& s);
// Opens an in-memory benchmark graph as `label`, runs `pipeline` on it (no pass
// when empty) and compiles it. A failure is a bug in the bench or below it:
// the bench stops with the message.
const CompiledModule& compileGraphIn(Session& s, Graph g, const std::string& label,
                                     const std::string& pipeline = "");

// Times a module on inputs through the arena runtime, outputs preallocated
// (allocated by the warm-up run and reused), as a deployment would run it.
double timeModule(const CompiledModule& m, const std::map<std::string, TensorData>& in, int runs);

}  // namespace fuselens::bench
