// Taps: a value that a fused group computes inside itself (never a kernel
// boundary, so compare cannot see it) compared with its eager tensor. The group
// is compiled once more as a tapped variant (codegen/lower/lower.h,
// kTapOutputsAttr): the same loop nests, plus stores of the tapped value to an
// extra output where the group computes it. The variant is fed the compiled
// run's own tensors for its inputs, so its outputs must equal the compiled
// run's bit for bit; each row says whether they do, which is what makes the
// tapped value the one the real run computed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "codegen/compiler.h"
#include "session/compare_report.h"
#include "session/reference_runs.h"

namespace fuselens {

struct TapRow {
  // row.value is invalid (the tap lives in a group's body, not in the final
  // graph); row.producer is the kernel, as in compare rows.
  CompareRow row;
  std::string kernel;  // KernelInfo::name
  int64_t group = -1;  // the fused group's id
  std::string node;    // the group's node in the optimized graph
  // The variant's group outputs equal the compiled run's, bit for bit; when
  // not, `outputsNote` names the first that differs (a bug in tapping).
  bool outputsIdentical = false;
  std::string outputsNote;
  bool ok() const { return row.judgedOk() && outputsIdentical; }
};

struct TapReport {
  CompareOptions options;
  std::vector<TapRow> rows;  // in the order the taps were asked for
  bool allWithin() const;
  // "PASS: 2 taps within rounding, group outputs unchanged by tapping" or
  // "FAIL: tap h (inside k3_fused, group 3) is beyond rounding (12× the expected error)".
  std::string verdict() const;
};

// Where a tap lives: the kernel (index into the module's kernels) whose fused
// group computes the original value, and the value in the group's body.
struct TapTarget {
  size_t kernel = 0;
  ValueId bodyValue;
};

// The original value named `name`, found inside a compiled fused group of `g`;
// otherwise one sentence: no such tensor, a kernel-boundary tensor (compare
// already reports it), or a value no compiled code computes.
Expected<TapTarget> findTap(const Graph& original, const Graph& g,
                            const std::vector<KernelInfo>& kernels, const std::string& name);

// Compiles the tapped variant of `target`'s group, feeds it the compiled run's
// tensors (`compiled`, by g's value index) and judges the tap against `refs`.
// `perturbEps`: the fault the compiled run planted on this kernel's outputs
// (session/perturb.h), planted on the variant's too, so that they still match.
Expected<TapRow> runTap(const Graph& original, const Graph& g,
                        const std::vector<KernelInfo>& kernels, const TapTarget& target,
                        const ReferenceRuns& refs,
                        const std::vector<std::optional<TensorData>>& compiled,
                        const CompareOptions& opts, CompileOptions compileOpts, double perturbEps,
                        const CancelToken& cancel);

}  // namespace fuselens
