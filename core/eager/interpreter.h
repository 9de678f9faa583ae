// The eager reference interpreter: runs a Graph node by node with the
// registry's plain kernels and keeps every intermediate tensor by ValueId.
// Fused groups are run by recursing into their body graph, so a graph after
// any pass can be run and compared with the graph before it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/ops/accumulation.h"
#include "core/ops/registry.h"
#include "core/support/cancel.h"
#include "core/support/status.h"

namespace fuselens {

struct EagerOptions {
  bool keepIntermediates = true;  // false: keep only graph inputs and outputs...
  std::vector<ValueId> keep;      // ...and these values (the memory budget's chosen ones)
  // Every f32 tensor (inputs, constants, each kernel's outputs, a Cast's f32
  // included) widened to f64, so the whole model is computed in double: the
  // exact answer the rounding-aware compare measures f32 runs against. The
  // run's f32 values come back as f64 tensors.
  bool widenToF64 = false;
  // How contractions sum (core/ops/accumulation.h); Storage sums f32 in f32.
  Accumulation accumulation = Accumulation::Wide;
};

struct EagerResult {
  std::vector<std::optional<TensorData>> tensors;  // indexed by ValueId.index
  const TensorData* find(ValueId v) const {
    return v.valid() && size_t(v.index) < tensors.size() && tensors[v.index] ? &*tensors[v.index]
                                                                             : nullptr;
  }
};

// Inputs by graph-input name. A missing input or a shape/dtype mismatch is an error.
Expected<EagerResult> runEager(const Graph& g, const std::map<std::string, TensorData>& inputs,
                               const EagerOptions& opts = {}, const Progress& progress = {},
                               const CancelToken& cancel = {});

// The context kernels run in here: bodies of If/Loop/Scan run through runEager,
// keeping only their outputs, with the run's precision settings (widenToF64,
// accumulation), and stop when `cancel` fires.
KernelContext eagerKernelContext(const CancelToken& cancel = {}, const EagerOptions& run = {});

}  // namespace fuselens
