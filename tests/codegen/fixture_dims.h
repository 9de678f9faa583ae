// Binds the symbolic dims of a fixture graph's inputs to its stored inputs'
// shapes, as `--dim` would, so models with a dynamic batch compile too.
#pragma once

#include <map>
#include <string>

#include "core/ir/graph.h"
#include "core/ops/registry.h"

namespace fuselens::test {

inline Status bindInputDims(Graph& g, const std::map<std::string, TensorData>& inputs) {
  std::map<std::string, int64_t> dims;
  for (ValueId v : g.inputs()) {
    auto it = inputs.find(g.value(v).name);
    if (it == inputs.end() || it->second.rank() != g.value(v).type.shape.size()) continue;
    for (size_t k = 0; k < it->second.rank(); ++k)
      if (!g.value(v).type.shape[k].symbol.empty())
        dims[g.value(v).type.shape[k].symbol] = it->second.shape[k];
  }
  if (dims.empty()) return Status::ok();
  for (ValueId v : g.valueIds())
    for (Dim& d : g.mutableValue(v).type.shape)
      if (auto it = dims.find(d.symbol); !d.symbol.empty() && it != dims.end())
        d = Dim::fixed(it->second);
  return inferGraphTypes(g);
}

}  // namespace fuselens::test
