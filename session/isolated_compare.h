// Isolated comparison: every kernel of the compiled run is compiled alone and
// fed the eager reference's tensors for its inputs, so its outputs differ from
// eager only by what that kernel itself does. Set beside the end-to-end
// comparison it tells "this kernel is wrong" from "error accumulated upstream":
// a tensor beyond rounding end to end whose kernel is within rounding in
// isolation inherited its error from earlier kernels. Each kernel's own error
// is judged against its own expected error: the imported nodes it stands for,
// run alone in f64 and as the f32 sample on the very inputs it was fed.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "codegen/compiler.h"
#include "core/compare/compare.h"
#include "core/compare/rounding.h"
#include "core/eager/interpreter.h"
#include "session/perturb.h"
#include "session/reference_runs.h"

namespace fuselens {

enum class IsolatedVerdict {
  Ok,                   // its own error within rounding (tolerance), and end to end when known
  KernelDiffers,        // its own error beyond rounding (tolerance) even when fed eager inputs
  AccumulatedUpstream,  // within alone, beyond end to end: the error came in with its inputs
  Skipped,              // not checked (a reference-fallback kernel); `skipped` says why
};
const char* verdictName(IsolatedVerdict v);  // "ok", "kernel differs", ...

struct IsolatedRow {
  std::string kernel;  // KernelInfo::name
  std::string node;    // the kernel's node in the optimized graph
  ValueId value;       // an output of the kernel, in the optimized graph
  std::string name;
  TensorMetrics isolated;                 // against the eager tensor, fixed tolerance
  std::optional<TensorMetrics> endToEnd;  // from an end-to-end run, when given
  // Rounding mode: the kernel's own error (alone, against its imported nodes
  // run in f64 on the same inputs) and the carried error (end to end, against
  // the whole model in f64), each with its expected error.
  std::optional<RoundingCheck> own, carried;
  IsolatedVerdict verdict = IsolatedVerdict::Ok;
  std::string skipped;
};

// One kernel of the report: its id (KernelInfo::name), the imported nodes it
// stands for, and its rows (one per output).
struct IsolatedKernel {
  std::string id;
  std::vector<std::string> members;
  std::vector<size_t> rows;  // indices into IsolatedReport::rows
};

struct IsolatedReport {
  CompareOptions options;
  std::vector<IsolatedRow> rows;  // kernels in run order, outputs in node order
  std::vector<IsolatedKernel> kernels;
  // The first kernel whose own error is beyond rounding (out of tolerance);
  // nullptr when none.
  const IsolatedRow* firstKernelDiffering() const;
  bool allWithin() const;  // no row differs in isolation or end to end
  // A kernel's verdict: its worst row's.
  IsolatedVerdict kernelVerdict(const IsolatedKernel& k) const;
};

// One kernel as a graph of its own: its node, with the kernel's constant
// inputs kept as constants (so codegen prepacks them exactly as in the full
// compile) and every other input a graph input named in0, in1, ...
// With `taps` (values of n's body), the node is the group's tapped variant:
// those values become further outputs, after n's own (kTapOutputsAttr).
struct KernelGraph {
  Graph graph;
  std::map<std::string, ValueId> feeds;  // graph-input name -> value of the source graph
  std::vector<ValueId> outputs;          // the source graph's values, in output order
};
KernelGraph extractKernelGraph(const Graph& g, const Node& n,
                               const std::vector<ValueId>& taps = {});

// The f64 and f32-summing runs rounding mode needs (session/reference_runs.h),
// of `original`, the graph `g`'s origins name.
struct RoundingReferences {
  const Graph& original;
  const ReferenceRuns& runs;
};

// Checks every kernel of `kernels` (of the optimized graph `g`) against `eager`,
// the eager run of the graph `g`'s origins name. Each kernel is fed eager
// tensors converted into the layout it reads (NCHWc or plain), so none is
// skipped for a layout. `endToEnd`, when given, holds the compiled run's
// tensors by g's ValueId.index, for the verdict. Rounding mode needs `refs`.
// `perturb` adds the same known error to a kernel's isolated outputs as the
// end-to-end run got (session/perturb.h).
Expected<IsolatedReport> compareIsolated(
    const Graph& g, const std::vector<KernelInfo>& kernels, const EagerResult& eager,
    const std::vector<std::optional<TensorData>>* endToEnd, const CompareOptions& opts,
    const CompileOptions& compileOpts, const Progress& progress = {},
    const CancelToken& cancel = {}, const RoundingReferences* refs = nullptr,
    const Perturbations* perturb = nullptr);

}  // namespace fuselens
