// Isolated comparison: every kernel of the compiled run is compiled alone and
// fed the eager reference's tensors for its inputs, so its outputs differ from
// eager only by what that kernel itself does. Set beside the end-to-end
// comparison it tells "this kernel is wrong" from "error accumulated upstream":
// a tensor out of tolerance end to end whose kernel is within tolerance in
// isolation inherited its error from earlier kernels.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "codegen/compiler.h"
#include "core/compare/compare.h"
#include "core/eager/interpreter.h"

namespace fuselens {

enum class IsolatedVerdict {
  Ok,                   // within tolerance in isolation (and end to end, when known)
  KernelDiffers,        // out of tolerance even when fed eager inputs
  AccumulatedUpstream,  // within tolerance alone, out of tolerance end to end
  Skipped,              // not checked; `skipped` says why
};
const char* verdictName(IsolatedVerdict v);  // "ok", "kernel differs", ...

struct IsolatedRow {
  std::string kernel;  // KernelInfo::name
  std::string node;    // the kernel's node in the optimized graph
  ValueId value;       // an output of the kernel, in the optimized graph
  std::string name;
  TensorMetrics isolated;
  std::optional<TensorMetrics> endToEnd;  // from an end-to-end run, when given
  IsolatedVerdict verdict = IsolatedVerdict::Ok;
  std::string skipped;
};

struct IsolatedReport {
  Tolerance tolerance;
  std::vector<IsolatedRow> rows;  // kernels in run order, outputs in node order
  // The first kernel whose output differs in isolation; nullptr when none.
  const IsolatedRow* firstKernelDiffering() const;
  bool allWithin() const;  // no row differs in isolation or end to end
};

// One kernel as a graph of its own: its node, with the kernel's constant
// inputs kept as constants (so codegen prepacks them exactly as in the full
// compile) and every other input a graph input named in0, in1, ...
struct KernelGraph {
  Graph graph;
  std::map<std::string, ValueId> feeds;  // graph-input name -> value of the source graph
  std::vector<ValueId> outputs;          // the source graph's values, in output order
};
KernelGraph extractKernelGraph(const Graph& g, const Node& n);

// Checks every kernel of `kernels` (of the optimized graph `g`) against `eager`,
// the eager run of the graph `g`'s origins name. `endToEnd`, when given, holds
// the compiled run's tensors by g's ValueId.index, for the verdict.
Expected<IsolatedReport> compareIsolated(const Graph& g, const std::vector<KernelInfo>& kernels,
                                         const EagerResult& eager,
                                         const std::vector<std::optional<TensorData>>* endToEnd,
                                         const Tolerance& tol, const CompileOptions& opts,
                                         const Progress& progress = {},
                                         const CancelToken& cancel = {});

}  // namespace fuselens
