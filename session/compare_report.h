// The comparison of a compiled run with the eager reference, as a report that
// carries its own verdict sentences: the CLI prints them, the GUI's status bar
// and compare dock show the same words. JSON forms for `--json` live in
// session/report_json.h.
#pragma once

#include <string>
#include <vector>

#include "core/compare/compare.h"
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
  TensorMetrics metrics;
};

struct CompareReport {
  Tolerance tolerance;
  std::vector<CompareRow> rows;  // in topological order of the producers
  std::string
      fallbackKernels;     // "k3_resize (Resize)": the reference-fallback kernels; empty when none
  bool allWithin() const;  // every compiled tensor (fallback rows are not judged)
  size_t fallbackCount() const;
  // The first row out of tolerance, in topological order; nullptr when none.
  const CompareRow* firstDivergent() const;
  // The verdict both faces print:
  //   PASS: 4 tensors within tolerance (atol 0.0001, rtol 0.0001)
  //   FAIL: y (from k0_fused) is the first tensor out of tolerance (atol 0.0001, rtol 0.0001)
  // A fallback tensor is never counted as within tolerance.
  std::string verdict() const;
  // "NOTE: 2 tensors not compiled (reference fallback), not compared: kernels ..."; empty when
  // none.
  std::string fallbackNote() const;
};

// A row's status word, the same in the CLI table and the GUI's compare dock:
// "ok", "fallback", "SHAPE MISMATCH", "OUT (3 elems)".
std::string rowStatus(const CompareRow& row);
// The kernel that produced a row's tensor: "group 0" for a fused group of
// `graph` (the graph the report's value ids refer to), else the producer's name.
std::string producerLabel(const CompareRow& row, const Graph& graph);

// The isolated check's verdict, the same in both faces:
//   PASS: every kernel within tolerance when fed eager inputs (atol 0.0001, rtol 0.0001)
//   FAIL: kernel k4_softmax is the first that differs when fed eager inputs (y, max abs 0.12)
//   FAIL: every kernel is within tolerance alone; the end-to-end error accumulated upstream
std::string isolatedVerdict(const IsolatedReport& report);

// "2.4e-07": compact numbers for tables and sentences.
std::string formatNumber(double v);

}  // namespace fuselens
