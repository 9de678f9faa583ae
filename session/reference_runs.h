// The eager runs a rounding-aware compare stands on (core/compare/rounding.h):
// the reference as it always runs (f32 tensors, double sums: what kernels are
// fed), the exact run (f64 throughout) and the f32 sample (f32 sums). Also the
// local form of the same for one kernel: the imported nodes it stands for, run
// alone on the eager tensors it was fed, so its own rounding is measured apart
// from everything upstream.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/eager/interpreter.h"

namespace fuselens {

struct ReferenceRuns {
  EagerResult eager;
  std::optional<EagerResult> exact;   // absent when the f64 run failed (`note` says why)
  std::optional<EagerResult> sample;  // absent when the f32-summing run failed
  std::string note;                   // empty when both ran
  // The exact and sample tensors of an imported value, standing in with the
  // eager tensor for a run that failed; nullptr when eager lacks it too.
  const TensorData* exactOf(ValueId v) const;
  const TensorData* sampleOf(ValueId v) const;
};

// The eager run, and with `rounding` the exact and sample runs too.
Expected<ReferenceRuns> runReferences(const Graph& original,
                                      const std::map<std::string, TensorData>& inputs,
                                      bool rounding, const CancelToken& cancel);

// The imported nodes `nodes` (plus the producers of `outputs`, should a pass
// have left them out of a node's origins) as one graph, fed from `eager` at
// every input from outside the set, run exact and as the f32 sample. Returns
// both runs' tensors of `outputs` (imported value ids), in order.
struct LocalReference {
  std::vector<TensorData> exact, sample;
};
Expected<LocalReference> runLocalReference(const Graph& original, std::vector<NodeId> nodes,
                                           const std::vector<ValueId>& outputs,
                                           const EagerResult& eager, const CancelToken& cancel);

}  // namespace fuselens
