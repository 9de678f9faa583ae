// The profile of a compiled model: where a run's time goes, kernel by kernel,
// against this machine's measured roofs (codegen/runtime/machine_peaks.h).
// Each kernel gets its median time and share, the GFLOP/s and GB/s it
// reaches (flops from its loop IR, bytes its inputs and outputs once), whether
// it is compute- or memory-bound (its flops per byte against the ridge point
// FMA peak / copy bandwidth) and what fraction of that roof it reaches. The
// executor's own overhead is, per run, its time minus its kernels' (median).
// Both faces print the same text and JSON; --trace writes Chrome trace JSON.
#pragma once

#include <string>
#include <vector>

namespace fuselens {

struct ProfileRequest {
  int runs = 20;    // timed runs after one warm-up
  int threads = 0;  // cap on the run's threads; 0: every hardware thread
};

struct KernelProfileRow {
  std::string name;
  double seconds = 0;  // median
  double share = 0;    // of the kernels' summed medians, 0..1
  double flops = 0, bytes = 0;
  double gflops = 0, gbps = 0;
  std::string bound;  // "compute", "memory", or "host" (not generated code: no flop count)
  double ofRoof = 0;  // achieved / attainable at this kernel's flops per byte, 0..1
  double start = 0;   // in the traced run, seconds from its start
  double traced = 0;  // its length in the traced run
};

struct ProfileReport {
  std::string model;
  int runs = 0, threads = 1;
  double fmaPeakGflops = 0, copyGBps = 0;
  double runSeconds = 0;       // median whole run
  double kernelSeconds = 0;    // sum of kernel medians
  double overheadSeconds = 0;  // median over runs of (the run - its kernels)
  double tracedRunSeconds = 0;
  std::vector<KernelProfileRow> kernels;  // in run order
  std::vector<std::string> verdicts;      // what to look at first, in sentences

  // The model, machine and overhead lines (what the GUI's profile dock heads its table with).
  std::string header() const;
  // A table, slowest kernel first, after header(), then the verdicts.
  std::string text() const;
  std::string json() const;         // indented by 2
  std::string chromeTrace() const;  // {"traceEvents": [...]}: Perfetto and chrome://tracing open it
};

}  // namespace fuselens
