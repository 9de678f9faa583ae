// The comparison of a compiled run with the eager reference, as a report that
// carries its own verdict sentences: the CLI prints them, the GUI's status bar
// and compare dock show the same words. JSON forms for `--json` live in
// session/report_json.h.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/compare/compare.h"
#include "core/compare/rounding.h"
#include "core/ir/graph.h"
#include "session/isolated_compare.h"

namespace fuselens {

struct CompareRow {
  ValueId value;         // in the final (optimized) graph
  std::string name;      // the value's name
  std::string producer;  // the kernel or op that produced it ("graph input" for inputs)
  bool isGraphOutput = false;
  // Produced by a reference-fallback kernel (codegen's KernelInfo::fallback, or
  // a view of such a tensor): not compiled, so never counted as agreement.
  bool fallback = false;
  TensorMetrics metrics;  // against the eager reference as it runs (f32 tensors, double sums)
  // Against the f64 reference, with the expected rounding error (rounding mode only).
  std::optional<RoundingCheck> rounding;
  // The row's verdict in either mode: out of a fixed tolerance reads as beyond,
  // a NaN/Inf or shape mismatch as wrong.
  NumericVerdict verdict = NumericVerdict::WithinRounding;
  bool judgedOk() const { return fallback || verdict == NumericVerdict::WithinRounding; }
};

struct CompareReport {
  CompareOptions options;
  // Why rounding verdicts stand on a weaker reference, when they do ("the f64
  // run failed: ..."): the f32 eager run then serves as the exact one. Empty normally.
  std::string referenceNote;
  std::vector<CompareRow> rows;  // in topological order of the producers
  std::string
      fallbackKernels;     // "k3_resize (Resize)": the reference-fallback kernels; empty when none
  bool allWithin() const;  // every compiled tensor (fallback rows are not judged)
  size_t fallbackCount() const;
  // The first row beyond rounding or wrong (out of tolerance in the fixed
  // mode), in topological order; nullptr when none.
  const CompareRow* firstDivergent() const;
  // The verdict both faces print. Rounding mode (the default):
  //   PASS: 4 tensors within rounding (max error against the f64 reference, margin 8×)
  //   FAIL: y (from k0_fused) is the first tensor beyond rounding (40× the expected error)
  //   FAIL: y (from k0_fused) is the first wrong tensor (3 NaN/Inf mismatches)
  // Fixed tolerances:
  //   PASS: 4 tensors within tolerance (atol 0.0001, rtol 0.0001)
  //   FAIL: y (from k0_fused) is the first tensor out of tolerance (atol 0.0001, rtol 0.0001)
  // A fallback tensor is never counted as within tolerance.
  std::string verdict() const;
  // "NOTE: 2 tensors not compiled (reference fallback), not compared: kernels ..."; empty when
  // none.
  std::string fallbackNote() const;
};

// A row's status, the same in the CLI table and the GUI's compare dock:
// "within rounding", "beyond rounding (12× the expected error)", "wrong (cosine
// 0.41)", "fallback"; with fixed tolerances "ok", "SHAPE MISMATCH", "OUT (3 elems)".
std::string rowStatus(const CompareRow& row);
// The row's error over its expected error (rounding mode) or over its allowed
// error (fixed mode): what the heat overlay colours by. Inf for NaN/shape mismatches.
double errorRatio(const CompareRow& row);
// The kernel that produced a row's tensor: "group 0" for a fused group of
// `graph` (the graph the report's value ids refer to), else the producer's name.
std::string producerLabel(const CompareRow& row, const Graph& graph);

// The isolated check's verdict, the same in both faces:
//   PASS: every kernel within rounding when fed eager inputs (max error against ...)
//   FAIL: kernel k4_softmax is the first whose own error is beyond rounding when fed eager
//         inputs (y, 40× the expected error)
//   FAIL: every kernel is within rounding alone; the end-to-end error accumulated upstream
// With fixed tolerances "within tolerance" and "differs" replace the rounding words.
std::string isolatedVerdict(const IsolatedReport& report);

// "2.4e-07": compact numbers for tables and sentences.
std::string formatNumber(double v);

}  // namespace fuselens
