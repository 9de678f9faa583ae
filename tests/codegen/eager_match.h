// Shared by the blocked-conv tests: whether a compiled run's outputs match
// the eager run of the plain graph they came from (blocked layouts compared
// unblocked), as an error sentence or "".
#pragma once

#include <string>
#include <vector>

#include "core/compare/compare.h"
#include "core/eager/interpreter.h"
#include "core/ir/graph.h"

namespace fuselens::testing {

template <typename Outputs>
std::string outputsMatchEager(const Graph& orig, const Graph& opt, const EagerResult& eager,
                              const Outputs& run) {
  for (ValueId out : opt.outputs()) {
    const Value& v = opt.value(out);
    const TensorData* want = eager.find(v.origin);
    if (!want || !run[out.index]) return "no output to compare";
    TensorMetrics tm =
        compareTensors(*want, orig.value(v.origin).layout, *run[out.index], v.layout, {1e-4, 1e-4});
    if (!tm.withinTolerance()) return "max abs " + std::to_string(tm.maxAbs);
  }
  return "";
}

}  // namespace fuselens::testing
