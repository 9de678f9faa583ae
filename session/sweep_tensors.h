// What a bucketed sweep does to tensors and how any sweep judges a run:
// padding inputs up to a bucket with zeros along the swept dim, slicing
// outputs back to the valid length, counting the elements a graph computes,
// and the rounding-aware verdict of a run's outputs against the eager
// reference on the unpadded shape (the same checks `compare` makes).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/compare/rounding.h"
#include "core/ir/graph.h"
#include "session/reference_runs.h"

namespace fuselens {

// The axes of `type` whose dim is the symbol `dim`.
std::vector<size_t> axesOfSymbol(const TensorType& type, const std::string& dim);

// `t` with extent `size` along each of `axes`: padded with zeros where it was
// shorter (inputs up to their bucket), cut where it was longer (outputs back
// to the valid length).
TensorData resizeAlong(const TensorData& t, const std::vector<size_t>& axes, int64_t size);

// Elements of every tensor a run of `g` computes: node outputs (static shapes).
int64_t computedElements(const Graph& g);

struct OutputVerdict {
  bool match = true;
  std::string text;  // "within rounding", or "y: beyond rounding (12× the expected error)"
};
// Each graph output of `reference` (by name in `outputs`) judged against the
// reference runs `refs` of `reference`, as compare judges a tensor.
OutputVerdict judgeOutputs(const Graph& reference, const ReferenceRuns& refs,
                           const std::map<std::string, TensorData>& outputs,
                           const CompareOptions& opts);

}  // namespace fuselens
